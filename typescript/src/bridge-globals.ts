/**
 * The bridge on `Window`, for a page's own code to type-check against the contract: import it
 * once (`import type {} from "todaysim/bridge-globals"`, or list it in tsconfig's `types`).
 * Every member is optional because the native host injects them only inside the app (and
 * `todaysimBridge` only todaysim's shim): a page opened in a plain browser has none, and its code
 * must say what it does then. A hook that takes its window as an argument takes `BridgeWindow`,
 * which `window` and `bridgedTarget(target)` both are.
 */
import type { BridgeHandle, TodayNativeEvent, TodayWebViewBridge } from "./bridge.js";
import type { TodayWebView } from "./generated/api.js";

declare global {
  interface Window {
    /** The host's bridge (`emit(type, payload)`), typed per message type. */
    todayWebViewBridge?: TodayWebViewBridge;
    /** What the host injects at document start: platform, surface, capabilities (H2). */
    __todayWebView?: TodayWebView;
    /**
     * Only under todaysim's shim (/bridge.js): the bridge's handle, where a page reads the host
     * reload's request id (`todaysimBridge.document.requestId`) and a test waits (`ready`, `inFlight`).
     */
    todaysimBridge?: BridgeHandle;
  }
  interface WindowEventMap {
    /** A native → Web message: its `detail` is the `NativeToWebEvent`. */
    todayNativeEvent: TodayNativeEvent;
  }
}

export {};
