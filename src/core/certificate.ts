import { createPrivateKey, createPublicKey, sign as rsaSign, verify as rsaVerify, type KeyObject } from 'node:crypto';
import { CairnError } from '../interfaces/errors.js';
import { canonicalJson } from './checksum.js';
import type { ErasureProofReport } from '../interfaces/store.js';

/**
 * Erasure certificates: a JSON document whose body is signed as a compact JWS with RS256 (RSASSA-PKCS1-v1_5
 * with SHA-256) under the operator's private key. The signature proves the erasure ran to completion under
 * that key and that the document was not altered since; it is not a third party's attestation.
 *
 * File format: `{ "certificate": <body>, "jws": "<header>.<payload>.<signature>" }`, where the JWS payload is
 * the canonical JSON of the body. Verification checks the signature with the public key AND that the
 * payload equals the body shown, so neither can be changed alone.
 */

export interface ErasureCounts {
  [store: string]: number;
}

export interface ErasureCertificateBody {
  type: 'cairn-erasure-certificate';
  /** 2 since the body quotes the backend's proof (`proof`); version 1 bodies have none. */
  version: 2;
  id: string;
  /** What was erased: a whole namespace, or every memory of a subject (user id) across namespaces. */
  scope: { namespace: string } | { subject: string };
  issuedAt: string;
  /** Rows removed or rewritten per store: memories, fullText, vectors, events, snapshots, quarantine… */
  counts: ErasureCounts;
  /** Each post-erasure check and whether it held. */
  checks: { name: string; passed: boolean; detail: string }[];
  /** The backend's own account of the file check: how it compacted, what it read, what it cannot reach. */
  proof: ErasureProofReport;
  /** SHA-256 of the state after erasure (the canonical checksum), binding the certificate to it. */
  stateChecksum: string;
}

export interface ErasureCertificate {
  certificate: ErasureCertificateBody;
  jws: string;
}

const b64url = (buf: Buffer): string => buf.toString('base64url');

function privateKey(pem: string): KeyObject {
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== 'rsa') throw new Error(`an RSA key is needed for RS256, got ${key.asymmetricKeyType}`);
    return key;
  } catch (err) {
    throw new CairnError('INVALID_INPUT', `the private key cannot be used: ${(err as Error).message}`, { field: 'key', cause: err });
  }
}

function publicKey(pem: string): KeyObject {
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== 'rsa') throw new Error(`an RSA key is needed for RS256, got ${key.asymmetricKeyType}`);
    return key;
  } catch (err) {
    throw new CairnError('INVALID_INPUT', `the public key cannot be used: ${(err as Error).message}`, { field: 'key', cause: err });
  }
}

/** Fails with INVALID_INPUT unless the PEM is an RSA private key (checked before anything is erased). */
export function checkPrivateKey(pem: string): void {
  privateKey(pem);
}

export function signCertificate(body: ErasureCertificateBody, privatePem: string): ErasureCertificate {
  const key = privateKey(privatePem);
  const header = b64url(Buffer.from(canonicalJson({ alg: 'RS256', typ: 'JWT', cty: 'cairn-erasure-certificate' })));
  const payload = b64url(Buffer.from(canonicalJson(body)));
  const signature = rsaSign('sha256', Buffer.from(`${header}.${payload}`), key);
  return { certificate: body, jws: `${header}.${payload}.${b64url(signature)}` };
}

export interface CertificateCheck {
  valid: boolean;
  reasons: string[];
  certificate: ErasureCertificateBody | null;
}

/** Checks a certificate document: signature, algorithm, payload equal to the body, and every check passed. */
export function verifyCertificate(document: unknown, publicPem: string): CertificateCheck {
  const key = publicKey(publicPem);
  const reasons: string[] = [];
  const doc = document as Partial<ErasureCertificate> | null;
  if (!doc || typeof doc !== 'object' || typeof doc.jws !== 'string' || typeof doc.certificate !== 'object' || doc.certificate === null) {
    return { valid: false, reasons: ['not a cairn erasure certificate (needs "certificate" and "jws")'], certificate: null };
  }
  const parts = doc.jws.split('.');
  if (parts.length !== 3) return { valid: false, reasons: ['the JWS is not in compact form'], certificate: null };
  const [h, p, s] = parts as [string, string, string];
  let header: { alg?: string };
  let payload: unknown;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { alg?: string };
    payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as unknown;
  } catch {
    return { valid: false, reasons: ['the JWS header or payload is not valid JSON'], certificate: null };
  }
  if (header.alg !== 'RS256') reasons.push(`unexpected algorithm ${String(header.alg)}`);
  else if (!rsaVerify('sha256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'))) reasons.push('the signature does not verify with this public key');
  if (canonicalJson(payload) !== canonicalJson(doc.certificate)) reasons.push('the certificate body differs from the signed payload');
  const body = payload as ErasureCertificateBody;
  if (body?.type !== 'cairn-erasure-certificate') reasons.push('the payload is not an erasure certificate');
  const failed = (body?.checks ?? []).filter((c) => !c.passed);
  if (failed.length) reasons.push(`checks failed: ${failed.map((c) => c.name).join(', ')}`);
  return { valid: reasons.length === 0, reasons, certificate: body };
}
