import { getContainerRuntimeClient } from 'testcontainers';
import { ownContainers, removeContainer } from './netns-stack.js';

/**
 * Removes every container this process created (label with our pid), the
 * ones that joined another's network namespace first. Returns what is left
 * (should be nothing).
 */
export async function removeOwnContainers(log: (line: string) => void): Promise<string[]> {
  const client = await getContainerRuntimeClient();
  const ids = await ownContainers();
  const joiners: string[] = [];
  const owners: string[] = [];
  for (const id of ids) {
    const info = await client.container.inspect(client.container.getById(id)).catch(() => undefined);
    if (!info) continue;
    (String(info.HostConfig.NetworkMode ?? '').startsWith('container:') ? joiners : owners).push(id);
  }
  for (const id of [...joiners, ...owners]) {
    log(`removing container ${id.slice(0, 12)}`);
    await removeContainer(id);
  }
  return ownContainers();
}
