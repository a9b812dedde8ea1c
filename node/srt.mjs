// SPDX-License-Identifier: LGPL-2.1-or-later
// import { SandboxManager } from 'ringfence/srt'
import srt from './lib/srt.cjs';

export const { SandboxManager, createManager } = srt;
export default srt;
