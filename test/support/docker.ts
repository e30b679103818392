// The Docker engine and the sandbox images scripts/test-services.sh provides. Under CI=true a
// missing engine or image fails the run; elsewhere the suites are skipped with a printed reason.
import { execFileSync } from 'node:child_process';

const HOW = 'run eval "$(bash scripts/test-services.sh)" first';

export interface DockerEnv {
  /** The tiny image (busybox + bash): fast on vfs storage. */
  image: string;
  /** The full image (debootstrap minbase + python3 + git). */
  fullImage: string;
}

function present(image: string): boolean {
  try {
    execFileSync('docker', ['image', 'inspect', image], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

export function dockerEnv(): DockerEnv | undefined {
  const image = process.env.STEWARD_TEST_SANDBOX_IMAGE;
  const fullImage = process.env.STEWARD_TEST_SANDBOX_FULL_IMAGE;
  const missing =
    !image || !fullImage
      ? 'STEWARD_TEST_SANDBOX_IMAGE is not set'
      : !present(image) || !present(fullImage)
        ? `the images ${image} and ${fullImage} are not on the engine (or it does not answer)`
        : undefined;
  if (!missing) return { image: image as string, fullImage: fullImage as string };
  if (process.env.CI === 'true') throw new Error(`CI=true but ${missing}; ${HOW}`);
  console.warn(`skipping Docker sandbox tests: ${missing} (${HOW})`);
  return undefined;
}

/** Containers on the engine carrying a label (any value, or this one). */
export function labelled(label: string): string[] {
  const out = execFileSync('docker', ['ps', '-aq', '--filter', `label=${label}`], { timeout: 20_000 });
  return out.toString().split('\n').filter(Boolean);
}
