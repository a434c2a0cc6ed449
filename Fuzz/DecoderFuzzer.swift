// The HTTP edge's input decoders: any bytes as the body of every endpoint that takes one
// (creation, gestures, lifecycle, web events, commands, clock, steps with their `$ref`s; each
// control-plane body's unknown fields named, as `fieldValidation` does), and as
// the header and query values the server parses (`Content-Type`, cursors, a token file). Every
// input must be decoded or refused with an `APIError`, never crash; whatever decodes is applied
// to a session, so the engine takes every input the edge lets through.
func fuzzDecoders(_ bytes: [UInt8]) {
    var runner = try! SessionRunner(config: SessionConfig(uid: "fuzz"))
    _ = try? InputDecoding.creation(bytes)
    if let body = try? JSON.parse(bytes: bytes) {
        for kind in [ControlBody.creation, .gesture, .lifecycle, .command, .clock, .fork] { _ = kind.unknownFields(in: body) }
    }
    for decode in StepsHandler.kinds.map(\.decode) {
        if let input = try? decode(bytes) { _ = try? runner.apply(input) }
    }
    if let steps = try? StepsHandler.decode(bytes).steps {
        for case let .resolve(resolve) in steps {
            if case let .success(input) = resolve(runner.session) { _ = try? runner.apply(input) }
        }
    }
    let text = String(decoding: bytes.prefix(512), as: UTF8.self)
    _ = BodyMediaType.refusal(contentType: text)
    _ = try? QueryParameters.cursor(text, field: "after", problem: "fuzz")
    _ = try? TokenFile.parse(text)
}
