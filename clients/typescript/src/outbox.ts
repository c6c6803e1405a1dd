/** How a bot's answers leave: at once, or together with those that piled up during a write. */
import { Action, PlayRequest } from "./gen/uno/v1/bot";

/** The most answers one PlayRequest.actions may hold (the protocol's limit). */
export const MAX_ACTION_BATCH = 256;

/**
 * Writes one message; calls `done` once the stream has taken it (the next write may start).
 * Returns false if the stream is gone (nothing was written and `done` will not be called).
 */
export type WriteFn = (msg: PlayRequest, done: () => void) => boolean;

/**
 * The answers of one stream. An answer given while no write is in flight is written at once,
 * alone; the answers given while a write is in flight wait for it and then leave together: one
 * PlayRequest.action, or one PlayRequest.actions of up to {@link MAX_ACTION_BATCH}, in the order
 * they were given. Nothing is ever held back to wait for company.
 */
export class ActionWriter {
  private queued: Action[] = [];
  private writing = false;
  private gone = false;

  constructor(private readonly write: WriteFn) {}

  /** Queues an answer (writing it at once if the stream is idle); false if the stream is gone. */
  send(action: Action): boolean {
    if (this.gone) return false;
    this.queued.push(action);
    if (!this.writing) this.flush();
    return !this.gone;
  }

  /**
   * Removes the answers to `requestId` still waiting for the write in flight (the server has
   * closed that request: an answer to it is never sent). Returns how many it removed.
   */
  drop(requestId: string): number {
    const before = this.queued.length;
    if (before) this.queued = this.queued.filter((a) => a.requestId !== requestId);
    return before - this.queued.length;
  }

  /** Answers waiting for the write in flight (tests). */
  get waiting(): number {
    return this.queued.length;
  }

  private flush(): void {
    if (this.queued.length === 0) {
      this.writing = false;
      return;
    }
    const ready = this.queued.length <= MAX_ACTION_BATCH ? this.queued : this.queued.slice(0, MAX_ACTION_BATCH);
    this.queued = ready === this.queued ? [] : this.queued.slice(MAX_ACTION_BATCH);
    this.writing = true;
    const msg = ready.length === 1 ? PlayRequest.fromPartial({ action: ready[0] }) : PlayRequest.fromPartial({ actions: { actions: ready } });
    if (!this.write(msg, () => this.flush())) {
      this.gone = true; // the stream ended: the server re-sends open requests after the reconnect
      this.queued = [];
      this.writing = false;
    }
  }
}
