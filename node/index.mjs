// SPDX-License-Identifier: LGPL-2.1-or-later
// The ES module entry: the same objects as index.cjs (one implementation).
import rf from './index.cjs';

export const { run, spawn, SandboxProcess, Instance, Session, plan, doctor, profiles, printable, RingfenceError } = rf;
export default rf;
