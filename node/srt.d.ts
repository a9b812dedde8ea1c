// SPDX-License-Identifier: LGPL-2.1-or-later
// ringfence/srt: the part of @anthropic-ai/sandbox-runtime's SandboxManager
// a harness drives, over ringfence (docs/node.md).

/** sandbox-runtime's configuration; ringfence reads the settings it maps
 * (docs/config.md, "sandbox-runtime settings") and names the rest. */
export interface SandboxRuntimeConfig {
  network?: {
    allowedDomains?: string[];
    deniedDomains?: string[];
    allowUnixSockets?: string[];
    allowLocalBinding?: boolean;
    httpProxyPort?: number;
    socksProxyPort?: number;
    [key: string]: unknown;
  };
  filesystem?: {
    denyRead?: string[];
    allowWrite?: string[];
    denyWrite?: string[];
    [key: string]: unknown;
  };
  ignoreViolations?: Record<string, string[]>;
  enableWeakerNestedSandbox?: boolean;
  [key: string]: unknown;
}

export interface NetworkHostPattern {
  host: string;
  port: number | undefined;
}

/** Only true allows. */
export type SandboxAskCallback = (params: NetworkHostPattern) => Promise<boolean | { allow: false; reason: string }>;

export interface SandboxDependencyCheck {
  errors: string[];
  warnings: string[];
}

export interface ISandboxManager {
  initialize(config: SandboxRuntimeConfig, sandboxAskCallback?: SandboxAskCallback, enableLogMonitor?: boolean): Promise<void>;
  isSupportedPlatform(): boolean;
  isSandboxingEnabled(): boolean;
  checkDependencies(): SandboxDependencyCheck;
  checkDependenciesAsync(): Promise<SandboxDependencyCheck>;
  /** a shell command line: `'ringfence' 'run' ... '--' 'bash' '-c' COMMAND` */
  wrapWithSandbox(command: string, binShell?: string, customConfig?: Partial<SandboxRuntimeConfig>, abortSignal?: AbortSignal): Promise<string>;
  wrapWithSandboxArgv(command: string, binShell?: string, customConfig?: Partial<SandboxRuntimeConfig>, abortSignal?: AbortSignal): Promise<{ argv: string[]; env: NodeJS.ProcessEnv }>;
  getConfig(): SandboxRuntimeConfig | undefined;
  /** what ringfence said about the configuration when initialize() read it */
  getWarnings(): string[];
  updateConfig(newConfig: SandboxRuntimeConfig): void;
  cleanupAfterCommand(): void;
  annotateStderrWithSandboxFailures(command: string, stderr: string): string;
  reset(): Promise<void>;
}

export declare const SandboxManager: ISandboxManager;
/** A manager of its own (SandboxManager is one, shared), e.g. with another binary. */
export declare function createManager(options?: { ringfence?: string; ringfenceEnv?: Record<string, string> }): ISandboxManager;
