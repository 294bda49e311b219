// SMTP politeness per server address (issue #55): the `politeness` scenario of bench/smtp-bulk.ts, by its old name.
process.env.SMTP_BENCH_SCENARIO = 'politeness';
await import('./smtp-bulk.js');
