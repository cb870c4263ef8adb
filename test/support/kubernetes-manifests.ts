/**
 * deploy/kubernetes/ as parsed objects, for the manifest checks
 * (test/unit/tooling/kubernetes-manifests.test.ts) and for rendering what
 * `podman kube play` runs (test/containers/kubernetes-manifests.test.ts).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const MANIFEST_DIR = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url));

/** A Kubernetes object, loosely typed: the tests read what they check. */
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> } } & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Manifest {
  file: string;
  object: K8sObject;
}

/** Every object of every *.yaml file (kustomization.yaml included), in file order. */
export function loadManifests(dir = MANIFEST_DIR): Manifest[] {
  const out: Manifest[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    for (const doc of parseAllDocuments(readFileSync(`${dir}${file}`, 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const object = doc.toJS() as K8sObject | null;
      if (object) out.push({ file, object });
    }
  }
  return out;
}

/** The one object of `kind` (throws when there is none or more than one). */
export function only(manifests: Manifest[], kind: string): K8sObject {
  const found = manifests.filter((m) => m.object.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind} in deploy/kubernetes, found ${found.length}`);
  return found[0]!.object;
}
