// YAML read as the service reads openapi.yaml (src/http/spec.ts): js-yaml with the YAML 1.2 core schema, one parser for
// src/ and the tests (no timestamps, no YAML 1.1 booleans).
import { CORE_SCHEMA, load, loadAll } from 'js-yaml';

/** One document; `any` like JSON.parse, for the tests that walk what they read. */
export const parseYaml = (text: string): any => load(text, { schema: CORE_SCHEMA });

/** Every document of a multi-document file (`---`); a syntax error throws. */
export const parseYamlDocuments = (text: string): any[] => loadAll(text, null, { schema: CORE_SCHEMA });
