/** A dataset problem the user must fix; message names the file or field and what to do. */
export class DatasetError extends Error {
  override name = 'DatasetError';
}
