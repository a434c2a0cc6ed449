// The bridge boundary: any bytes as a Web event body. The JSON parser, the bridge parser, the
// deeplink parser and a session's whole input path must answer every input without crashing.
func fuzzBridge(_ bytes: [UInt8]) {
    guard let message = try? JSON.parse(bytes: bytes) else { return }
    _ = message.serialized()
    if let url = message["url"]?.stringValue { _ = DeepLink(url) }
    var runner = try! SessionRunner(config: SessionConfig(uid: "fuzz"))
    _ = try? runner.apply(.webEvent(message))
    _ = try? runner.apply(.gesture(.pull(requestId: nil)))
    _ = try? runner.apply(.webEvent(message))
    _ = try? runner.advance(by: 6000)
    _ = runner.session.view
}
