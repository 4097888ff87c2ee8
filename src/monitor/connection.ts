/** One registered plugin: sends requests over its socket and matches the replies by id. */
import type { Socket } from 'node:net';

import { BadGateway, GatewayTimeout } from '../errors.js';
import { encodeLine } from './lines.js';
import { isResultOf, type Method, type MethodResult, type Reply } from './protocol.js';

export interface InstanceSummary {
  id: string;
  ip: string;
  /** Whole seconds since the instance registered (the name the API has always answered). */
  binded: number;
  /** When the instance registered, in ISO 8601. */
  registered_at: string;
}

export const REPLY_TIMEOUT_MS = 2000;

interface Pending {
  method: Method;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class PluginConnection {
  readonly registeredAt = Date.now();
  private nextRequestId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(
    readonly id: string,
    readonly ip: string,
    private readonly socket: Socket,
    private readonly timeoutMs = REPLY_TIMEOUT_MS,
  ) {}

  /** What the instance list says of it. */
  summary(): InstanceSummary {
    const binded = Math.floor((Date.now() - this.registeredAt) / 1000);
    return { id: this.id, ip: this.ip, binded, registered_at: new Date(this.registeredAt).toISOString() };
  }

  request<M extends Method>(method: M, params?: Record<string, unknown>): Promise<MethodResult<M>> {
    const requestId = this.nextRequestId++;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(
          new GatewayTimeout(`Instance ${this.id} did not answer "${method}" within ${this.timeoutMs / 1000} seconds.`),
        );
      }, this.timeoutMs);
      this.pending.set(requestId, { method, resolve, reject, timer });
      this.socket.write(
        encodeLine(params === undefined ? { id: requestId, method } : { id: requestId, method, params }),
      );
    }).then((result) => this.checked(method, result));
  }

  /** Settles the request a reply answers; a reply to nothing pending (e.g. too late) is ignored. */
  receive(reply: Reply): void {
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.settle(reply.id, waiting);
    if ('error' in reply) {
      const failed = `Instance ${this.id} failed to answer "${waiting.method}"`;
      waiting.reject(
        new BadGateway(`${failed}: ${reply.error}`, { clientMessage: `${failed}; Steward's log says why` }),
      );
    } else {
      waiting.resolve(reply.result);
    }
  }

  /** Fails whatever is still waiting: the socket has closed. */
  closed(): void {
    for (const [requestId, waiting] of this.pending) {
      this.settle(requestId, waiting);
      waiting.reject(new BadGateway(`Instance ${this.id} disconnected before answering "${waiting.method}".`));
    }
  }

  private settle(requestId: number, waiting: Pending): void {
    clearTimeout(waiting.timer);
    this.pending.delete(requestId);
  }

  private checked<M extends Method>(method: M, result: unknown): MethodResult<M> {
    if (isResultOf(method, result)) return result;
    throw new BadGateway(`Instance ${this.id} sent a malformed "${method}" result.`);
  }
}
