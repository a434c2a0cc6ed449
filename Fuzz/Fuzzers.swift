// libFuzzer's entry point (built by Scripts/fuzz from Sources/TodayHost, TodayStore and
// TodayServer compiled as one module): every input goes through both targets.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    fuzzBridge(bytes)
    fuzzDecoders(bytes)
    return 0
}
