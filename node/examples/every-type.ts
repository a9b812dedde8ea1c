// SPDX-License-Identifier: LGPL-2.1-or-later
// Uses every type the package exports; `tsc --noEmit` on it is a test
// (tests/node-sdk/types.test.mjs), so a declaration that drifts from use fails.
import * as rf from 'ringfence';
import type {
  Command, NetworkMode, NetworkOptions, ExposeRule, Limits, RouteSpec, AskQuestion, AskScope, AskAnswer, OnAsk,
  SandboxOptions, RunOptions, SpawnOptions, Status, NetworkReport, Result, RootOptions, InstanceInfo,
  InstanceCreateOptions, Change, SessionInfo, ApplyReport, Plan, ProfileInfo,
} from 'ringfence';
import { SandboxManager, createManager } from 'ringfence/srt';
import type { SandboxRuntimeConfig, NetworkHostPattern, SandboxAskCallback, SandboxDependencyCheck, ISandboxManager } from 'ringfence/srt';

async function main(workspace: string): Promise<void> {
  const command: Command = ['sh', '-c', 'echo hi; exit 3'];
  const mode: NetworkMode = 'allowlist';
  const network: NetworkOptions = { mode, allowDomains: ['registry.npmjs.org'], allowPorts: [443] };
  const expose: ExposeRule = { source: '/opt/tool', mode: 'ro' };
  const limits: Limits = { memory: '1G', pids: 200, cpu: 0.5, timeout: 300 };
  const route: RouteSpec = { url: 'https://api.example.com', headers: { 'x-api-key': 'env:API_KEY' }, allow: ['POST /v1/*'] };
  const scope: AskScope = 'run';
  const onAsk: OnAsk = async (q: AskQuestion): Promise<AskAnswer> =>
    (console.log(rf.printable(q.host), rf.printable(q.process?.name ?? '')), { decision: q.type === 'network' && q.host === 'pypi.org' ? 'allow' : 'deny', scope });
  const base: SandboxOptions = { workspace, network, expose: [expose, '/srv/data:/data:rw'], limits, routes: { api: route, claude: 'anthropic' }, onAsk };
  const runOptions: RunOptions = { ...base, input: 'data', maxBuffer: 1 << 20 };
  const r: Result = await rf.run(command, runOptions);
  const exit: number = r.exitCode;
  const out: string = r.stdout;
  const bytes: Result<Buffer> = await rf.run('cat /bin/true', { workspace, encoding: 'buffer' });
  const b: Buffer = bytes.stdout;
  const report: NetworkReport | null = r.network;
  const spawnOptions: SpawnOptions = { workspace, pty: false, stdio: ['pipe', 'pipe', 'inherit'] };
  const p: rf.SandboxProcess = rf.spawn(['cat'], spawnOptions);
  p.stdout?.on('data', (d: Buffer) => d.length);
  p.on('exit', (code: number | null, signal: NodeJS.Signals | null) => [code, signal]);
  p.stdin?.end('x');
  const st: Status = await p.status;
  p.kill('SIGTERM');
  const root: RootOptions = { root: '/tmp/rf-home' };
  const createOptions: InstanceCreateOptions = { ...root, credentials: ['~/.config/tool/auth.json'], ephemeral: true };
  const inst: rf.Instance = await rf.Instance.create('chat-1', createOptions);
  const infos: InstanceInfo[] = await rf.Instance.list(root);
  await inst.run(['true'], { workspace });
  await rf.Instance.remove('chat-1', { ...root, force: true });
  const ov = await rf.run(['make'], { workspace, changes: 'overlay' });
  const session = new rf.Session(ov.session ?? '', root);
  const sessions: SessionInfo[] = await rf.Session.list(root);
  const changes: Change[] = (await session.show()).changes;
  const diff: string = rf.printable(await session.diff(), { max: 1 << 20, newlines: true });
  const applied: ApplyReport = await session.apply({ only: ['src'] });
  await session.discard();
  const plan: Plan = await rf.plan(['make'], base);
  const doctor: Record<string, unknown> = await rf.doctor();
  const profiles: ProfileInfo[] = await rf.profiles();
  try {
    await rf.run(['true'], { workspace: '/nonexistent' });
  } catch (e) {
    if (e instanceof rf.RingfenceError)
      console.error(e.step, e.path, e.hint, e.exitCode, e.stderr, e.status?.exitCode);
  }

  const config: SandboxRuntimeConfig = { network: { allowedDomains: ['github.com'], deniedDomains: [] }, filesystem: { denyRead: ['~/.ssh'], allowWrite: ['.'], denyWrite: [] } };
  const ask: SandboxAskCallback = async (h: NetworkHostPattern) => h.host === 'pypi.org';
  const deps: SandboxDependencyCheck = SandboxManager.checkDependencies();
  const mine: ISandboxManager = createManager({ ringfence: '/usr/bin/ringfence' });
  await mine.initialize(config, ask);
  const wrapped: string = await SandboxManager.wrapWithSandbox('npm test');
  await SandboxManager.reset();
  console.log(exit, out, b, report, st, infos, sessions, changes, diff, applied, plan, doctor, profiles, deps, wrapped);
}

void main(process.cwd());
