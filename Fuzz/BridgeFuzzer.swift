// libFuzzer entry point (built by Scripts/fuzz together with Sources/TodayHost): any bytes as
// a Web event body. The JSON parser, the bridge parser, the deeplink parser and a session's
// whole input path must answer every input without crashing.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBridge(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let message = try? JSON.parse(bytes: bytes) else { return 0 }
    _ = message.serialized()
    if let url = message["url"]?.stringValue { _ = DeepLink(url) }
    var runner = try! SessionRunner(config: SessionConfig(uid: "fuzz"))
    _ = try? runner.apply(.webEvent(message))
    _ = try? runner.apply(.gesture(.pull(requestId: nil)))
    _ = try? runner.apply(.webEvent(message))
    _ = try? runner.advance(by: 6000)
    _ = runner.session.view
    return 0
}
