/**
 * An image reference as the Docker distribution grammar spells it (reference.go), with the one digest
 * algorithm SageMaker pins by: `[registry[:port]/]path[:tag][@sha256:<64 hex>]`. Checked before
 * anything is uploaded, so a slip (`--image 'not an image'`) is bad input and not a failed job.
 */

/** The forms an image reference takes, said with every refusal. */
export const IMAGE_REFERENCE_FORM = 'repository[:tag] or repository@sha256:<64 hex digits>';

const ALNUM = '[a-z0-9]+';
const SEPARATOR = '(?:[._]|__|-+)';
const PATH_COMPONENT = `${ALNUM}(?:${SEPARATOR}${ALNUM})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]+)?`;
const NAME = `(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const TAG = '[\\w][\\w.-]{0,127}';
const REFERENCE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@(.+))?$`);
const SHA256_DIGEST = /^sha256:[0-9a-f]{64}$/;
/** The longest repository name a registry takes. */
const MAX_NAME = 255;

export interface ImageReference {
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

/** The parts of an image reference, or what is wrong with it (one sentence, without the forms). */
export function parseImageReference(text: string): ImageReference | { readonly problem: string } {
  if (text.trim() === '') return { problem: 'it is empty' };
  if (/\s/.test(text)) return { problem: 'it contains white space' };
  const m = REFERENCE.exec(text);
  if (!m) {
    return {
      problem: /[A-Z]/.test(text.split('/').slice(1).join('/') || text)
        ? 'it is not an image reference (repository names are lower case)'
        : 'it is not an image reference',
    };
  }
  const [, repository, tag, digest] = m;
  if (repository.length > MAX_NAME)
    return { problem: `the repository name is ${repository.length} characters (at most ${MAX_NAME})` };
  if (digest !== undefined && !SHA256_DIGEST.test(digest))
    return { problem: `its digest "${digest}" is not sha256: and 64 lower-case hex digits` };
  return { repository, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** What is wrong with an image reference, with the forms it may take; undefined when it is one. */
export function imageReferenceProblem(text: string): string | undefined {
  const parsed = parseImageReference(text);
  return 'problem' in parsed ? `${parsed.problem}; expected ${IMAGE_REFERENCE_FORM}` : undefined;
}
