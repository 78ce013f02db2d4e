import type { APIRoute, GetStaticPaths } from 'astro';
import { siteData } from '../../lib/data.js';
import { dataFiles, type DataFile } from '../../lib/downloads.js';

export const getStaticPaths = (async () => {
  const data = await siteData();
  return dataFiles(data).map((file) => ({ params: { path: file.path }, props: { file } }));
}) satisfies GetStaticPaths;

export const GET: APIRoute<{ file: DataFile }> = ({ props }) => {
  const type = props.file.path.endsWith('.csv') ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8';
  return new Response(props.file.render(), { headers: { 'Content-Type': type } });
};
