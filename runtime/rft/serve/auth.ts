/**
 * The service's API key when it listens beyond loopback: `Authorization: Bearer <key>` on every route but
 * `/health`. Keys are compared as SHA-256 digests with timingSafeEqual, so neither the key's length nor its prefix
 * leaks through response times. Replies never echo what the client sent.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Reply } from './http';

export const API_KEY_ENV = 'TRINITY_WORKBENCH_API_KEY';

/** 256 random bits, URL-safe. */
export function generateApiKey(): string {
  return `twb-${randomBytes(32).toString('base64url')}`;
}

const digest = (s: string): Uint8Array => new Uint8Array(createHash('sha256').update(s, 'utf8').digest());

/** OpenAI's 401 body. */
function unauthorized(message: string): Reply {
  return {
    status: 401,
    json: { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
  };
}

/** Checks a request's `Authorization` header against `key`: undefined when it may pass, else the 401 to answer. */
export function bearerAuth(key: string, where: string): (authorization: string | undefined) => Reply | undefined {
  const want = digest(key);
  return (authorization) => {
    const m = /^Bearer[ \t]+(\S.*)$/i.exec(authorization ?? '');
    if (!m) return unauthorized(`Missing API key: send \`Authorization: Bearer <key>\` (the key is ${where}).`);
    return timingSafeEqual(digest(m[1].trim()), want) ? undefined : unauthorized('Incorrect API key provided.');
  };
}
