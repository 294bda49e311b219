// Popular mailbox domains (our own list): the candidates for typo suggestions in email validation.

/**
 * The first this many of POPULAR_EMAIL_DOMAINS are the global providers, each with far more users than any free
 * provider off the list: a free-list domain one edit away from one of them ("yaho.com") is still corrected.
 */
export const MAJOR_PROVIDERS = 8;

/** Popular mailbox domains, most used first: the candidates for typo suggestions (ties go to the earlier one). */
export const POPULAR_EMAIL_DOMAINS: readonly string[] = [
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'icloud.com',
  'aol.com',
  'live.com',
  'msn.com',
  'googlemail.com',
  'ymail.com',
  'me.com',
  'mac.com',
  'protonmail.com',
  'proton.me',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  't-online.de',
  'mail.com',
  'mail.ru',
  'yandex.ru',
  'yandex.com',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'orange.fr',
  'free.fr',
  'laposte.net',
  'btinternet.com',
  'yahoo.co.uk',
  'yahoo.fr',
  'yahoo.de',
  'hotmail.co.uk',
  'hotmail.fr',
  'hotmail.de',
  'hotmail.it',
  'libero.it',
  'qq.com',
  '163.com',
  '126.com',
  'zoho.com',
  'fastmail.com',
  'rediffmail.com',
  // A real provider one edit from gmail.com: listed so that it is never "corrected".
  'email.com',
];
