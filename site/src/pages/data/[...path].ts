import { gzipSync } from 'node:zlib';
import type { APIRoute, GetStaticPaths } from 'astro';
import { siteData } from '../../lib/data.js';
import { dataFiles, type DataFile } from '../../lib/downloads.js';

export const getStaticPaths = (async () => {
  const data = await siteData();
  return dataFiles(data).map((file) => ({ params: { path: file.path }, props: { file } }));
}) satisfies GetStaticPaths;

const TYPES: [string, string][] = [['.gz', 'application/gzip'], ['.csv', 'text/csv; charset=utf-8'], ['.json', 'application/json; charset=utf-8']];

export const GET: APIRoute<{ file: DataFile }> = ({ props }) => {
  const { path } = props.file;
  const type = TYPES.find(([ext]) => path.endsWith(ext))?.[1] ?? 'application/octet-stream';
  const text = props.file.render();
  return new Response(path.endsWith('.gz') ? gzipSync(text) : text, { headers: { 'Content-Type': type } });
};
