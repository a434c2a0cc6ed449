// The HTTP edge's input decoders: any bytes as the body of every endpoint that takes one
// (creation, gestures, lifecycle, web events, commands, clock, steps with their `$ref`s; each
// control-plane body's unknown fields named, as `fieldValidation` does), and as
// the header and query values the server parses (`Content-Type`, cursors, a token file). Every
// input must be decoded or refused with an `APIError`, never crash; whatever decodes is applied
// to a session, so the engine takes every input the edge lets through.
func fuzzDecoders(_ bytes: [UInt8]) {
    var runner = try! SessionRunner(config: SessionConfig(uid: "fuzz"))
    let fields = try? BodyFields.object(from: bytes)
    if let fields { _ = try? InputDecoding.creation(fields) }
    if let body = try? JSON.parse(bytes: bytes) {
        for kind in [ControlBody.creation, .gesture, .lifecycle, .command, .clock, .fork] { _ = kind.unknownFields(in: body) }
    }
    for kind in StepsHandler.kinds {
        if let fields, let decode = InputDecoding.decoder(forChannel: kind.key), let input = try? decode(fields) {
            _ = try? runner.apply(input)
        }
    }
    if let steps = try? StepsHandler.decode(bytes).steps {
        for step in steps {
            switch step {
            case let .input(input): _ = try? runner.apply(input)
            case let .reference(channel, body):
                if case let .success(input) = StepReferences.input(channel: channel, body: body, view: runner.session.view) {
                    _ = try? runner.apply(input)
                }
            case .refused: break
            }
        }
    }
    let text = String(decoding: bytes.prefix(512), as: UTF8.self)
    _ = BodyMediaType.refusal(contentType: text)
    _ = try? QueryParameters.cursor(text, field: "after", problem: "fuzz")
    _ = try? TokenFile.parse(text)
}
