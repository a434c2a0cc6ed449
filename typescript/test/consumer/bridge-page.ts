// A page's own bridge code, as the Today Page writes it (its native-event listener, its
// refresh-feedback hook, its emitter), type-checked against todaysim's contract from the packed
// package: systemtests/test_typescript.py compiles it with --strict in the scratch project that
// installed the tarball, and test/consumer/page-types.test.ts compiles it again with one
// mistake at a time, each of which must fail.
import type {} from "todaysim/bridge-globals";
import { bridgedTarget } from "todaysim";
import type { BridgedTarget, BridgeWindow, NativeToWebEvent, PayloadOf, RefreshRequestedEvent, ReturnOf, WebToNativeType } from "todaysim";

/** The page's one way to the host: nothing when the page runs outside the app. */
export function emitToNative<T extends WebToNativeType>(type: T, payload: PayloadOf<T>): Promise<ReturnOf<T>> | undefined {
  return window.todayWebViewBridge?.emit(type, payload);
}

export function supports(capability: string): boolean {
  return window.__todayWebView?.capabilities.includes(capability) ?? false;
}

export function onIOS(): boolean {
  return window.__todayWebView?.platform === "ios";
}

async function answer(request: RefreshRequestedEvent, reload: () => Promise<boolean>): Promise<undefined> {
  const started = Date.now();
  if (request.reason === "app_foreground" && supports("today_page_revalidate_feedback.v1")) {
    await emitToNative("todayPage.refreshStarted", { schemaVersion: 1, requestId: request.requestId, presentation: "header" });
  }
  const ok = await reload();
  const done: undefined = await window.todayWebViewBridge?.emit("todayPage.refreshResult", {
    schemaVersion: 1,
    requestId: request.requestId,
    mode: "soft",
    status: ok ? "succeeded" : "failed",
    elapsedMs: Date.now() - started,
    error: ok ? undefined : { stage: "loadBatches", status: 503, message: "the feed did not load" },
  });
  return done;
}

/** Under todaysim's shim, the id of the host's reload that loaded this document (null for a first load). */
export function reloadRequestId(host: BridgeWindow = window): string | null {
  return host.todaysimBridge?.document.requestId ?? null;
}

/**
 * The native-event listener: answers refresh requests, follows visibility, scrolls on command.
 * On `window` in the app; a test hands it `bridgedTarget(target)` (listenOn).
 */
export function listenToNative(reload: () => Promise<boolean>, scrollTo: (batchId: string, smooth: boolean) => void,
  host: BridgeWindow = window): () => void {
  let visible = true;
  const listener = (event: CustomEvent<NativeToWebEvent>): void => {
    const message = event.detail;
    switch (message.type) {
      case "todayPage.refreshRequested":
        void answer(message, reload);
        break;
      case "webView.visibilityWillChange":
        break;
      case "webView.visibilityChanged":
        visible = message.visible;
        break;
      case "todayPage.scrollToSection":
        if (visible) scrollTo(message.batchId, message.behavior === "smooth");
        break;
    }
  };
  host.addEventListener("todayNativeEvent", listener);
  return () => host.removeEventListener("todayNativeEvent", listener);
}

/** The same listener on a window-like target the bridge was installed on (jsdom's window, an EventTarget in Node). */
export function listenOn(target: EventTarget, reload: () => Promise<boolean>): () => void {
  return listenToNative(reload, () => undefined, bridgedTarget(target));
}

export async function offerLiveWidget(): Promise<boolean> {
  const bridge = window.todayWebViewBridge;
  if (!bridge || !supports("live_widget_creation.v1")) return false;
  const result = await bridge.emit("liveWidgetCreation.present");
  return result.presented;
}

export async function confirmDelete(): Promise<"delete" | "keep" | "none"> {
  const result = await emitToNative("nativeDialog.present", {
    title: "Delete this card?",
    actions: [{ actionId: "delete", title: "Delete", role: "destructive" }, { actionId: "keep", title: "Keep" }],
  });
  if (result === undefined) return "none";
  if (result.type === "action") return result.actionId === "delete" ? "delete" : "keep";
  return "none";
}

export function openLink(url: string): void {
  void emitToNative("webView.navigationAction", { url });
  void emitToNative("track", { event: "link_opened", properties: { url } });
}
