// SPDX-License-Identifier: LGPL-2.1-or-later
// Types of the ringfence package (docs/node.md).
import type { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';

/** An argv, or a string run with /bin/sh -c. */
export type Command = readonly string[] | string;

export type NetworkMode = 'none' | 'host' | 'allowlist';

export interface NetworkOptions {
  mode?: NetworkMode;
  allowDomains?: readonly string[];
  denyDomains?: readonly string[];
  allowPorts?: readonly (number | string)[];
}

export interface ExposeRule {
  source: string;
  target?: string;
  mode?: 'ro' | 'rw';
}

export interface Limits {
  /** bytes or "256M", "1G" */
  memory?: number | string;
  pids?: number;
  /** CPUs, e.g. 0.25 */
  cpu?: number;
  /** seconds */
  timeout?: number;
  killGrace?: number;
}

/** A credential route (docs/network.md, "Keys stay outside"). */
export interface RouteSpec {
  url?: string;
  preset?: 'anthropic' | 'openai' | 'gemini' | 'github' | (string & {});
  /** header name → source: env:VAR, file:PATH or cmd:COMMAND, optionally after bearer: or basic:USER: */
  headers?: Record<string, string>;
  /** "METHOD PATH" patterns, e.g. "POST /v1/messages*" */
  allow?: readonly string[];
  ca?: string;
  allowHttp?: boolean;
}

/** A question ringfence asks (docs/network.md, "Asking instead of refusing"). */
export interface AskQuestion {
  version: number;
  type: 'network' | 'file';
  id: number;
  host?: string;
  port?: number;
  protocol?: 'http' | 'connect' | 'socks5';
  path?: string;
  access?: string;
  /** the process inside that asked: its pid as the sandbox numbers it and
   * its name (printable ASCII, anything else '?'); null when unknown */
  process: { pid: number; name: string } | null;
  command?: string;
  [key: string]: unknown;
}

export type AskScope = 'once' | 'run' | 'always';

export interface AskAnswer {
  decision: 'allow' | 'deny';
  scope?: AskScope;
}

/** Anything but an answer that says allow is a refusal. */
export type OnAsk = (question: AskQuestion) => AskAnswer | boolean | Promise<AskAnswer | boolean>;

type StdioEntry = 'pipe' | 'inherit' | 'ignore' | number | Readable | Writable | null | undefined;

export interface SandboxOptions {
  /** the directory the command may read and write (default: cwd) */
  workspace?: string;
  chdir?: string;
  network?: NetworkMode | NetworkOptions;
  allowDomains?: readonly string[];
  denyDomains?: readonly string[];
  allowPorts?: readonly (number | string)[];
  addHosts?: readonly string[];
  allowPrivateAddresses?: boolean;
  publish?: readonly string[];
  /** "SRC[:DST][:ro|rw]" or {source, target, mode} */
  expose?: string | ExposeRule | readonly (string | ExposeRule)[];
  env?: Record<string, string>;
  keepEnv?: readonly string[];
  limits?: Limits;
  /** seconds; the whole tree is stopped after it (exit 124, timedOut) */
  timeout?: number;
  killGrace?: number;
  profile?: string | readonly string[];
  profiles?: readonly string[];
  /** NAME → preset, https URL, or a RouteSpec */
  routes?: Record<string, string | RouteSpec>;
  instance?: string | Instance;
  ephemeral?: boolean;
  ownIdentity?: boolean;
  changes?: 'direct' | 'overlay';
  session?: string;
  backend?: 'native' | 'landlock' | 'auto' | 'bwrap' | 'firejail' | 'container' | 'none';
  acceptWeaker?: boolean;
  landlock?: 'best-effort' | 'required' | 'off';
  seccomp?: 'default' | 'strict' | 'off';
  image?: string;
  /** a layer of settings in ringfence's own schema (docs/config.md) */
  config?: Record<string, unknown>;
  configFiles?: readonly string[];
  configFormat?: 'ringfence' | 'picoclaw' | 'mitto' | 'srt';
  agent?: string;
  noConfig?: boolean;
  trustWorkspaceConfig?: boolean;
  explainDenials?: boolean;
  /** a terminal inside (ringfence run --pty), relayed over stdin/stdout */
  pty?: boolean;
  /** answer the sandbox's network and file questions in-process */
  onAsk?: OnAsk;
  /** seconds a question waits for onAsk (default 30) */
  askTimeout?: number;
  /** the ringfence binary (default $RINGFENCE_BIN, else ringfence on PATH) */
  ringfence?: string;
  /** the instance root ($RINGFENCE_HOME) */
  root?: string;
  /** variables for ringfence itself (not the command: use env) */
  ringfenceEnv?: Record<string, string>;
  /** ringfence's working directory (the default workspace) */
  cwd?: string;
  /** SIGTERM to the sandbox when aborted */
  signal?: AbortSignal;
}

export interface RunOptions extends SandboxOptions {
  input?: string | Buffer | Uint8Array;
  /** 'buffer': stdout and stderr as Buffers (default 'utf8') */
  encoding?: BufferEncoding | 'buffer';
  /** bytes kept of each of stdout and stderr (default 64 MiB); more sets truncated */
  maxBuffer?: number;
}

export interface SpawnOptions extends SandboxOptions {
  stdio?: readonly [StdioEntry?, StdioEntry?, StdioEntry?];
}

/** The status record, as --status-json writes it (json), in camelCase. */
export interface Status {
  /** what `ringfence run` exits with: the command's code, 128+N on signal N, 124 timed out, 126/127 */
  exitCode: number;
  signal: NodeJS.Signals | null;
  exited: boolean;
  timedOut: boolean;
  oomKilled: boolean;
  pidsLimitHit: boolean;
  wallSeconds: number;
  peakMemoryBytes: number;
  /** the allowlist proxy's report (docs/network.md) */
  network: NetworkReport | null;
  /** the overlay session with changes: 'overlay' */
  session: string | null;
  /** the backend that ran it: 'native', 'landlock', 'bwrap', ... */
  backend: string | null;
  /** every way this sandbox is weaker than the usual one: accepted by ringfence (a contained root) or asked for by name ('seccomp off: ... (asked for)') */
  weakenings: string[];
  /** the sandbox's id in the audit trail and `ringfence ps` */
  sandbox: string | null;
  /** why the command could not be executed (exit 126/127) */
  error: string | null;
  json: Record<string, unknown>;
}

export interface NetworkReport {
  mode?: string;
  asked?: { via: string; questions: number; allowed: number; refused: number; list: Record<string, unknown>[]; [k: string]: unknown };
  [key: string]: unknown;
}

export interface Result<Out extends string | Buffer = string> extends Status {
  stdout: Out;
  stderr: Out;
  /** more than maxBuffer was written */
  truncated: boolean;
}

/** Shaped like Node's ChildProcess, plus .status. */
export declare class SandboxProcess extends EventEmitter {
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  readonly stdio: [Writable | null, Readable | null, Readable | null];
  /** ringfence's pid on the host */
  readonly pid: number | undefined;
  /** the sandbox's first process, on the host, once it started */
  readonly sandboxPid: number | null;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  readonly killed: boolean;
  /** resolves when the command ended; rejects with RingfenceError when it could not start */
  readonly status: Promise<Status>;
  kill(signal?: NodeJS.Signals | number): boolean;
  ref(): this;
  unref(): this;
  on(event: 'exit' | 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  on(event: 'spawn', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

export declare function run(command: Command, options: RunOptions & { encoding: 'buffer' }): Promise<Result<Buffer>>;
export declare function run(command: Command, options?: RunOptions): Promise<Result<string>>;
export declare function spawn(command: Command, options?: SpawnOptions): SandboxProcess;

export interface RootOptions {
  root?: string;
  ringfence?: string;
  ringfenceEnv?: Record<string, string>;
}

export interface InstanceInfo {
  name: string;
  path: string;
  directories: Record<'config' | 'data' | 'state' | 'cache' | 'runtime' | 'home' | 'tmp', string>;
  identity: { uid: number; gid: number; own: boolean; model: string; [k: string]: unknown };
  ephemeral: boolean;
  profile: string | null;
  created: number;
  running: number;
  running_pids: number[];
  [key: string]: unknown;
}

export interface InstanceCreateOptions extends RootOptions {
  /** "SRC[:DEST]", copied mode 0600 */
  credentials?: string | readonly string[];
  copies?: string | readonly string[];
  target?: string;
  ephemeral?: boolean;
  ownIdentity?: boolean;
  profile?: string;
  network?: NetworkMode;
  allowDomains?: readonly string[];
  denyDomains?: readonly string[];
  publish?: readonly string[];
}

export declare class Instance {
  readonly name: string;
  readonly path: string;
  readonly info: InstanceInfo;
  static create(name: string, options?: InstanceCreateOptions): Promise<Instance>;
  static open(name: string, options?: RootOptions): Promise<Instance>;
  static list(options?: RootOptions): Promise<InstanceInfo[]>;
  static remove(name: string, options?: RootOptions & { force?: boolean }): Promise<void>;
  run(command: Command, options: RunOptions & { encoding: 'buffer' }): Promise<Result<Buffer>>;
  run(command: Command, options?: RunOptions): Promise<Result<string>>;
  spawn(command: Command, options?: SpawnOptions): SandboxProcess;
  remove(options?: { force?: boolean }): Promise<void>;
}

export interface Change {
  path: string;
  kind: 'added' | 'modified' | 'deleted' | 'renamed' | 'mode' | 'refused' | (string & {});
  type: string;
  [key: string]: unknown;
}

export interface SessionInfo {
  id: string;
  workspace: string;
  instance: string | null;
  created: number;
  files: number;
  bytes: number;
  changes?: Change[];
}

export interface ApplyReport {
  session: string;
  workspace: string;
  applied: string[];
  conflicts: string[];
  refused: string[];
  failed: string[];
}

export declare class Session {
  readonly id: string;
  constructor(id: string, options?: RootOptions);
  static list(options?: RootOptions): Promise<SessionInfo[]>;
  show(): Promise<SessionInfo & { changes: Change[] }>;
  diff(options?: { json?: false }): Promise<string>;
  diff(options: { json: true }): Promise<SessionInfo & { changes: (Change & { diff?: string })[] }>;
  apply(options?: { only?: string | readonly string[]; force?: boolean }): Promise<ApplyReport>;
  discard(): Promise<void>;
}

/** The plan `ringfence plan` prints: mounts, environment, identity, limits... */
export type Plan = Record<string, unknown> & { backend: string; mounts: Record<string, unknown>[]; env: unknown };

export declare function plan(command: Command, options?: SandboxOptions): Promise<Plan>;
/** ringfence doctor --json (docs/doctor.md) */
export declare function doctor(options?: RootOptions): Promise<Record<string, unknown>>;
export interface ProfileInfo { name: string; description: string }
export declare function profiles(options?: RootOptions): Promise<ProfileInfo[]>;

/** A string a sandboxed command chose (a host, a path, a process name, a
 * diff), safe for a terminal: printable ASCII kept (and line breaks with
 * newlines: true), anything else '?'; at most max (4096) characters. */
export declare function printable(s: unknown, options?: { max?: number; newlines?: boolean }): string;

export declare class RingfenceError extends Error {
  /** the setting or setup step that failed (e.g. "workspace", "mount") */
  readonly step: string | null;
  /** the path it names, if any */
  readonly path: string | null;
  /** the fix ringfence suggests */
  readonly hint: string | null;
  /** what `ringfence` exited with (125 setup, 127 not found) */
  readonly exitCode: number;
  /** ringfence's stderr (the tail), when the message came from it */
  readonly stderr: string;
  /** the status record, when the sandbox reported the failure */
  readonly status?: Status;
  constructor(message: string, options?: { hint?: string | null; step?: string | null; path?: string | null; exitCode?: number; stderr?: string });
}
