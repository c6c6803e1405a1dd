/** UNO Arena bot SDK for TypeScript / Node.js. */
export {
  UnoBot,
  FatalStreamError,
  FATAL_CODES,
  PROTOCOL_VERSION,
  SDK_VERSION,
  SDK_TAG,
  LOCAL_SOCKET_ENV,
  localSocket,
  helloBotVersion,
  DEFAULT_MAX_BATCH,
  MAX_HELLO_BATCH,
  backoffDelay,
  decisionBudgetMs,
  fallbackAction,
  type BotOptions,
  type DecideFn,
  type DecisionContext,
  type SeatState,
  type ReconnectOptions,
} from "./client";
export { runMain } from "./main";
export { ActionWriter, MAX_ACTION_BATCH, type WriteFn } from "./outbox";
export { AddressError, parseAddress, describeStatus, type Address } from "./address";
export { cardPoints, isPlayOf, wildColor, lastPlayedSeat } from "./helpers";
export { heuristicChoice, heuristicDecide, colorHeldMost, holdsActiveColor } from "./heuristic";
export { consoleLogger, silentLogger, prefixed, parseLogLevel, type Logger, type LogLevel } from "./log";
// The generated protocol code: common types by name, every module as a namespace.
export {
  ActionResult,
  BotServiceClient,
  BotServiceService,
  type BotServiceServer,
  CloseReason,
  DecisionRequest,
  Hello,
  MatchEnded,
  MatchStarted,
  PlayRequest,
  PlayResponse,
  Prompt,
  RequestClosed,
  StreamError,
  Welcome,
} from "./gen/uno/v1/bot";
export { ActionKind, Direction, Event, LegalAction, Phase, RuleSet, SeatView } from "./gen/uno/v1/game";
export { Card, Color, Rank } from "./gen/uno/v1/cards";
export { ErrorReason } from "./gen/uno/v1/errors";
export * as botpb from "./gen/uno/v1/bot";
export * as gamepb from "./gen/uno/v1/game";
export * as cardspb from "./gen/uno/v1/cards";
export * as errorspb from "./gen/uno/v1/errors";
export * as adminpb from "./gen/uno/v1/admin";
