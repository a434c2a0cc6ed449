// The declarations of Web/bridge-core.mjs, which the package ships unchanged beside them as
// dist/bridge-core.mjs (tools/ship-core.mjs copies both at build time; tsc copies neither).
// Written by hand: the core is plain JavaScript, shared byte for byte with /bridge.js, so its
// types live here, on the bridge contract's types of bridge.ts.
import type { BridgeHandle, BridgeOptions } from "./bridge.js";
import type { SessionView } from "./generated/api.js";

/**
 * Reads the session's view, then attaches the bridge to `target` (`attachBridge`): afterwards
 * `target` has `todayWebViewBridge`, `__todayWebView` and `todaysimBridge` (`bridgedTarget(target)`
 * types it so) and receives each native → Web message as a `todayNativeEvent`. Rejects with an
 * Error naming the status and the problem when the server refuses the read (an unknown
 * session: 404), with a TypeError when `target` is no EventTarget or an option is wrong.
 */
export declare function installBridge(target: EventTarget, options: BridgeOptions): Promise<BridgeHandle>;

/** The same from a session view already read (`GET /v1/sessions/{id}`), synchronously. */
export declare function attachBridge(target: EventTarget, view: SessionView, options: BridgeOptions): BridgeHandle;
