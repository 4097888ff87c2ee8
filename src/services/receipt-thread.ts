/** The worker thread that receives uploads from their sockets (see threaded-receipt.ts). */
import { parentPort } from 'node:worker_threads';

import { BACKGROUND_NICENESS, setThreadNiceness } from '../runtime/niceness.js';
import { receiptError, receiveFile } from '../storage/received-file.js';
import { socketBodyChunks } from '../storage/socket-body.js';
import { StagedFolder } from '../storage/staged-folder.js';
import {
  type FileTask,
  type ReceiptReply,
  type ReceiptRequest,
  type ReceiptTask,
  receivedError,
  sentError,
  type UnpackTask,
} from './threaded-receipt.js';
import { receiveUpload } from './upload-receipt.js';

async function unpack(task: UnpackTask, signal: AbortSignal): Promise<ReceiptReply['outcome']> {
  const { folder } = task;
  const staging = new StagedFolder(() => {
    if ('refusal' in folder) throw receivedError(folder.refusal);
    return folder.path;
  }, task.staging);
  try {
    const received = await receiveUpload(socketBodyChunks(task.body, signal), staging, task.limits);
    if (received.names.length === 0) await staging.discard();
    return { received };
  } catch (error) {
    const failure = await receiptError(error, staging.where() ?? task.where);
    await staging.discard();
    return { failure: sentError(failure) };
  }
}

async function write(task: FileTask, signal: AbortSignal): Promise<ReceiptReply['outcome']> {
  try {
    return { received: await receiveFile(socketBodyChunks(task.body, signal), task.path) };
  } catch (error) {
    return { failure: sentError(error) };
  }
}

function receive(task: ReceiptTask, signal: AbortSignal): Promise<ReceiptReply['outcome']> {
  return task.kind === 'unpack' ? unpack(task, signal) : write(task, signal);
}

// The reads of other requests go first: the event loop's thread answers them as soon as it wakes.
setThreadNiceness(BACKGROUND_NICENESS);
const port = parentPort;
const uploads = new Map<number, AbortController>();
port?.on('message', (request: ReceiptRequest) => {
  const { id } = request;
  if ('abort' in request) {
    uploads.get(id)?.abort(receivedError(request.abort));
    return;
  }
  const controller = new AbortController();
  uploads.set(id, controller);
  const receiving = receive(request.task, controller.signal).catch((error: unknown) => ({ failure: sentError(error) }));
  void receiving.then((outcome) => {
    uploads.delete(id);
    port.postMessage({ id, outcome } satisfies ReceiptReply);
  });
});
