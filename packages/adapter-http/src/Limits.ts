/**
 * The listener's limits: each default, and the range an operator may set it in. Bodies: a full batch of 25
 * addresses of 128 characters is under 4 KB, so the default is far above any route's need and the maximum far
 * below harm. Timeouts are fitted to such bodies: a client that has not sent its headers in 10 s, or its whole
 * request in 30 s, is cut off, so slow connections cannot pile up.
 */
export const limits = {
  maxBodyBytes: { default: 65_536, minimum: 1_024, maximum: 1_048_576 },
  headersTimeoutMillis: { default: 10_000, minimum: 500, maximum: 120_000 },
  requestTimeoutMillis: { default: 30_000, minimum: 1_000, maximum: 600_000 },
  maxConnections: { minimum: 16, maximum: 1_000_000 }
} as const
