/**
 * The bridge on `Window`, for a page's own code to type-check against the contract: import it
 * once (`import type {} from "todaysim/bridge-globals"`, or list it in tsconfig's `types`).
 * Both members are optional because the native host injects them only inside the app: a page
 * opened in a plain browser has neither, and its code must say what it does then.
 */
import type { TodayNativeEvent, TodayWebViewBridge } from "./bridge.js";
import type { TodayWebView } from "./generated/api.js";

declare global {
  interface Window {
    /** The host's bridge (`emit(type, payload)`), typed per message type. */
    todayWebViewBridge?: TodayWebViewBridge;
    /** What the host injects at document start: platform, surface, capabilities (H2). */
    __todayWebView?: TodayWebView;
  }
  interface WindowEventMap {
    /** A native → Web message: its `detail` is the `NativeToWebEvent`. */
    todayNativeEvent: TodayNativeEvent;
  }
}

export {};
