// s3rver in a process of its own: GDAL's upload to /vsis3/ is synchronous in gdal-async, so a
// server in the test's own event loop could never answer it. Prints the port, stops on SIGTERM.
import S3rver from 's3rver';

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});
const { port } = await server.run();
process.stdout.write(`${port}\n`);
process.on('SIGTERM', () => {
  server.close().then(() => process.exit(0));
});
