/** Files the API answers, saved as downloads: fetched with the token, which a plain link could not send. */
import { send } from './client';

/** The file name a Content-Disposition header gives, else `fallback`. */
function fileName(disposition: string | null, fallback: string): string {
  const match = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition ?? '');
  return match?.[1] ? decodeURIComponent(match[1]) : fallback;
}

/** Fetches `url` and saves its body under the name the API gives it, else `fallback`; resolves to that name. */
export async function saveDownload(url: string, fallback: string): Promise<string> {
  const response = await send(url);
  const name = fileName(response.headers.get('content-disposition'), fallback);
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await response.blob());
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  return name;
}
