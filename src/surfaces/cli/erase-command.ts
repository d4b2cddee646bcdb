import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { verifyCertificate } from '../../core/certificate.js';
import { CairnError } from '../../interfaces/errors.js';
import type { OpenedEngine } from '../open-engine.js';
import { removeCaptureJobs } from '../hooks/hook-io.js';

type Open = (flags: { db?: string; namespace?: string }, opts?: { withoutEmbedder?: boolean }) => Promise<OpenedEngine>;

function readKey(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CairnError('INVALID_INPUT', `cannot read the ${what} key ${path}: ${(err as Error).message}`, { field: 'key' });
  }
}

/**
 * `cairn erase --namespace <ns> | --subject <id> --key <private.pem> --out <certificate.json> [--json]` and
 * `cairn verify-certificate <certificate.json> --key <public.pem>`: a contract scripts depend on.
 */
export function registerEraseCommands(program: Command, open: Open, write: (s: string) => void): void {
  program
    .command('erase')
    .description('erase every copy of a namespace or a subject, check, and write a signed certificate')
    .option('--db <path>', 'database file')
    .option('--namespace <ns>', 'erase this whole namespace')
    .option('--subject <id>', 'erase every memory of this user id, in every namespace')
    .requiredOption('--key <private.pem>', "the operator's RSA private key (PEM) that signs the certificate")
    .requiredOption('--out <certificate.json>', 'where to write the certificate')
    .option('--json', 'print JSON')
    .action(async (o: Record<string, string | boolean | undefined>, cmd: Command) => {
      const g = cmd.optsWithGlobals() as { db?: string; namespace?: string; json?: boolean };
      const namespace = (o['namespace'] as string | undefined) ?? g.namespace;
      const subject = o['subject'] as string | undefined;
      if (Boolean(namespace) === Boolean(subject)) {
        throw new CairnError('INVALID_INPUT', 'erase needs exactly one of --namespace <ns> or --subject <id>', { field: 'namespace' });
      }
      const key = readKey(o['key'] as string, 'private');
      const opened = await open({ db: g.db }, { withoutEmbedder: true });
      try {
        const cert = await opened.engine.erase(namespace ? { namespace } : { subject: subject as string }, key);
        // Capture jobs next to the database hold statements not yet saved: they go too (nothing is lost,
        // the next capture reads its transcript again).
        const jobs = removeCaptureJobs(opened.config.dataDir, { all: true });
        try {
          writeFileSync(o['out'] as string, `${JSON.stringify(cert, null, 2)}\n`);
        } catch (err) {
          throw new CairnError('STORE_UNAVAILABLE', `the erasure ran but the certificate could not be written to ${o['out']}: ${(err as Error).message}`);
        }
        const c = cert.certificate;
        if (g.json) write(JSON.stringify(cert, null, 2));
        else {
          write(`erased ${JSON.stringify(c.scope)}: ${Object.entries(c.counts).map(([k, v]) => `${k} ${v}`).join(', ')}`);
          for (const check of c.checks) write(`  ${check.passed ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}`);
          if (jobs) write(`removed ${jobs} pending capture job file${jobs === 1 ? '' : 's'} next to the database`);
          write(`certificate ${c.id} written to ${o['out']} (RS256)`);
        }
        if (c.checks.some((x) => !x.passed)) process.exitCode = 1;
      } finally {
        await opened.close();
      }
    });

  program
    .command('verify-certificate')
    .description('check an erasure certificate against the public key')
    .argument('<certificate.json>', 'the certificate file')
    .requiredOption('--key <public.pem>', "the operator's RSA public key (PEM)")
    .option('--json', 'print JSON')
    .action(async (file: string, o: Record<string, string | boolean | undefined>, cmd: Command) => {
      const g = cmd.optsWithGlobals() as { json?: boolean };
      let doc: unknown;
      try {
        doc = JSON.parse(readFileSync(file, 'utf8'));
      } catch (err) {
        throw new CairnError('INVALID_INPUT', `cannot read certificate ${file}: ${(err as Error).message}`, { field: 'file' });
      }
      const result = verifyCertificate(doc, readKey(o['key'] as string, 'public'));
      if (g.json) write(JSON.stringify({ valid: result.valid, reasons: result.reasons, certificate: result.certificate }, null, 2));
      else write(result.valid ? `valid: certificate ${result.certificate?.id} for ${JSON.stringify(result.certificate?.scope)}` : `INVALID: ${result.reasons.join('; ')}`);
      if (!result.valid) process.exitCode = 1;
    });
}
