/// The files of `Web/` the server serves, built into the binary (Plugins/EmbedFiles).
public enum WebAssets {
    /// The browser bridge shim (`Web/bridge.js`), served at `/bridge.js`.
    public static let bridgeScript: [UInt8] = bridgeJs

    /// The built-in dashboard (`Web/dashboard.html`), served at `GET /`: one self-contained HTML
    /// document (inline CSS and JS, system fonts, no external resources, works offline). It lists
    /// sessions (filtered by uid, label and status), shows one session's header, pull and overlay
    /// states, its pending watchdogs on the session clock, and its timeline as three lanes
    /// (native, Web, timers) fed live by `GET /v1/sessions/{id}/events`, with violations marked;
    /// buttons inject the common inputs. A session opens by click or by the URL hash
    /// `#session=<id>`.
    public static let dashboardPage: [UInt8] = dashboardHtml

    /// The rules page (`Web/rules.html`), served at `GET /rules`: it renders `rulesMarkdown` in
    /// the browser with the rules' anchors, so `/rules#h13` opens H13 (the dashboard links each
    /// rule id there).
    public static let rulesPage: [UInt8] = rulesHtml

    /// `docs/RULES.md`, embedded from outside `Web/` (Plugins/EmbedFiles' `alsoEmbedded`), served
    /// at `GET /rules.md`.
    public static let rulesMarkdown: [UInt8] = rulesMd
}
