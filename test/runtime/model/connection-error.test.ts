// A connection error says where it tried and why (docs/contract.md#retry), from the error's cause chain.
import { APIConnectionError, APIConnectionTimeoutError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { connectionCause, describeConnectionError, endpointOf } from '../../../src/runtime/model/connection-error.ts';

/** What Node's fetch throws: a TypeError whose cause is the socket's error, with its code. */
function fetchFailed(code: string): APIConnectionError {
  const socket = Object.assign(new Error(`connect ${code}`), { code });
  return new APIConnectionError({ cause: Object.assign(new TypeError('fetch failed'), { cause: socket }) });
}

describe('connection errors', () => {
  it('name the host and port, the default API when no base URL is set', () => {
    expect(endpointOf(undefined)).toBe('api.anthropic.com:443');
    expect(endpointOf('http://127.0.0.1:8080/v1')).toBe('127.0.0.1:8080');
    expect(endpointOf('http://proxy.local')).toBe('proxy.local:80');
  });

  it('say the cause: refused, DNS, TLS, a timeout', () => {
    expect(describeConnectionError(fetchFailed('ECONNREFUSED'), 'http://127.0.0.1:9')).toBe(
      'connection to 127.0.0.1:9 failed: refused (ECONNREFUSED): nothing listens there',
    );
    expect(connectionCause(fetchFailed('ENOTFOUND'))).toBe('the name did not resolve (DNS, ENOTFOUND)');
    expect(connectionCause(fetchFailed('CERT_HAS_EXPIRED'))).toBe('TLS failed (CERT_HAS_EXPIRED)');
    expect(connectionCause(fetchFailed('UND_ERR_CONNECT_TIMEOUT'))).toBe('timed out (UND_ERR_CONNECT_TIMEOUT)');
    expect(connectionCause(new APIConnectionTimeoutError(), true)).toBe('timed out');
  });
});
