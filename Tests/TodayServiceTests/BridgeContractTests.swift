import Foundation
import Testing
import TodayHost
import TodayTraceProperties

/// Issue 36, item 2: the bridge contract is schemas of the OpenAPI document (`NativeToWebEvent`,
/// `WebToNativeEvent` with its `x-todaysim-bridge` map of return values, `TodayWebView`), and
/// these tests hold them to the engine: the event types the bridge decoder knows are exactly
/// the schemas' types; every message the engine sends Web, every answer and settlement of a
/// bridge call and every timeline entry of random sessions validates against its schema; and
/// the decoder accepts a Web message exactly when its schema does.
@Suite struct BridgeContractTests {
    /// The document read once, with what these tests look up in it.
    struct Contract {
        let document: JSON
        let validator: SchemaValidator
        /// `type` → schema name, from each union's `discriminator.mapping`.
        let webToNative: [String: String]
        let nativeToWeb: [String: String]
        /// `type` → (`returns`, `answer`) schema names; nil where the call gives `undefined`/`null`.
        let bridge: [String: (returns: String?, answer: String?)]

        init() throws {
            document = try YAMLSubset.parse(try OpenAPIDocumentTests.document())
            validator = try SchemaValidator(document: document)
            webToNative = try Self.mapping(validator.schemas["WebToNativeEvent"])
            nativeToWeb = try Self.mapping(validator.schemas["NativeToWebEvent"])
            guard case let .object(entries)? = validator.schemas["WebToNativeEvent"]?["x-todaysim-bridge"] else {
                throw SchemaValidator.SchemaProblem(path: "WebToNativeEvent", problem: "no x-todaysim-bridge map")
            }
            var bridge: [String: (returns: String?, answer: String?)] = [:]
            for (type, entry) in entries {
                bridge[type] = (try Self.schemaName(entry["returns"], type), try Self.schemaName(entry["answer"], type))
            }
            self.bridge = bridge
        }

        static func mapping(_ union: JSON?) throws -> [String: String] {
            guard case let .object(pairs)? = union?["discriminator"]?["mapping"] else {
                throw SchemaValidator.SchemaProblem(path: "discriminator", problem: "no mapping")
            }
            return Dictionary(try pairs.map { type, ref in (type, try schemaName(ref, type) ?? "") }, uniquingKeysWith: { $1 })
        }

        /// `#/components/schemas/Name` → `Name`; `null` → nil.
        static func schemaName(_ ref: JSON?, _ owner: String) throws -> String? {
            guard let ref, !ref.isNull else { return nil }
            let prefix = "#/components/schemas/"
            guard let text = ref.stringValue, text.hasPrefix(prefix) else {
                throw SchemaValidator.SchemaProblem(path: owner, problem: "\(ref.serialized()) is no schema reference")
            }
            return String(text.dropFirst(prefix.count))
        }

        /// Each problem of `value` against schema `name`, or one line saying the schema is broken.
        func problems(_ value: JSON, _ name: String) -> [String] {
            do { return try validator.problems(value, against: name) } catch { return ["the schema \(name) cannot be checked: \(error)"] }
        }

        /// Each problem of a Web → native `message` as the host reads it: its type's schema with
        /// every field its `x-todaysim-host-accepts` names read by the looser schema given there
        /// (H7: any `status`), so the protocol's enums do not make the host's leniency a disagreement.
        func hostProblems(_ message: JSON) -> [String] {
            guard let type = message["type"]?.stringValue, let name = webToNative[type],
                  case let .object(members)? = validator.schemas[name] else { return problems(message, "WebToNativeEvent") }
            guard case let .object(looser)? = validator.schemas[name]?["x-todaysim-host-accepts"] else { return problems(message, name) }
            let read = JSON.object(members.map { key, value in
                guard key == "properties", case let .object(properties) = value else { return (key, value) }
                return (key, .object(properties.map { field, schema in (field, looser.first { $0.0 == field }?.1 ?? schema) }))
            })
            do { return try validator.problems(message, schema: read, path: name) } catch { return ["\(name) as the host reads it: \(error)"] }
        }
    }

    static let contract = Result { try Contract() }

    // MARK: The document as read

    /// The YAML reader agrees with the document's own conventions (its paths and operations, read
    /// line by line by `OpenAPIDocumentTests`), so a schema it reads is the document's.
    @Test func theYAMLReaderReadsTheWholeDocument() throws {
        let contract = try Self.contract.get()
        #expect(contract.document["openapi"] == "3.1.0")
        let (operations, _) = OpenAPIDocumentTests.documentedOperations(in: try OpenAPIDocumentTests.document())
        guard case let .object(paths)? = contract.document["paths"] else { Issue.record("no paths"); return }
        let read = paths.reduce(0) { count, path in
            count + (path.1.objectKeys.filter { OpenAPIDocumentTests.httpMethods.contains($0) }.count)
        }
        #expect(read == operations.count && read > 20, "the YAML reader found \(read) operations, the line scan \(operations.count)")
        // A block scalar, a quoted pattern and a flow sequence, as YAML reads them.
        #expect(contract.validator.schemas["BridgeId"]?["pattern"] == "^[^\\x00-\\x1F\\x7F]*$")
        #expect(contract.validator.schemas["TimelineKind"]?["enum"]?.arrayValue?.count == 13)
        #expect(contract.validator.schemas["WebEvent"]?["description"]?.stringValue?.hasPrefix("A Web → native bridge message exactly as Web emits it (H21): one of the ten messages\nthe bridge") == true)
    }

    /// Every keyword of every schema is one the validator checks (or an annotation): a keyword
    /// it does not know would otherwise let a value through unchecked.
    @Test func theValidatorKnowsEveryKeywordOfTheDocument() throws {
        let contract = try Self.contract.get()
        var unknown: [String] = []
        for (name, schema) in contract.validator.schemas.sorted(by: { $0.key < $1.key }) {
            Self.collectKeywords(schema, path: name, into: &unknown)
        }
        #expect(unknown.isEmpty, "keywords outside the validator: \(unknown)")
    }

    static let checkedKeywords: Set<String> = ["$ref", "type", "const", "enum", "required", "properties", "additionalProperties",
                                               "items", "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum",
                                               "maximum", "oneOf", "anyOf", "allOf", "not", "if", "then", "else"]

    static func collectKeywords(_ schema: JSON, path: String, into unknown: inout [String]) {
        guard case let .object(keywords) = schema else { return }
        for (keyword, argument) in keywords {
            if SchemaValidator.annotations.contains(keyword) || keyword.hasPrefix("x-") { continue }
            guard checkedKeywords.contains(keyword) else {
                unknown.append("\(path).\(keyword)")
                continue
            }
            switch keyword {
            case "properties":
                if case let .object(properties) = argument {
                    for (name, sub) in properties { collectKeywords(sub, path: "\(path).\(name)", into: &unknown) }
                }
            case "oneOf", "anyOf", "allOf":
                for (index, sub) in (argument.arrayValue ?? []).enumerated() { collectKeywords(sub, path: "\(path).\(keyword)[\(index)]", into: &unknown) }
            case "items", "additionalProperties", "not", "if", "then", "else":
                collectKeywords(argument, path: "\(path).\(keyword)", into: &unknown)
            default:
                continue
            }
        }
    }

    // MARK: The types on both sides

    /// The `case "…":` literals of the bridge decoder's `switch` (`BridgeParser.parse`), each
    /// one confirmed known by the parser itself.
    static func decoderTypes() throws -> Set<String> {
        let source = String(decoding: try RepositoryFiles.bytes("Sources/TodayHost/Bridge/BridgeParser.swift"), as: UTF8.self)
        let expression = try NSRegularExpression(pattern: #"^\s*case\s+("[^"]+"(?:\s*,\s*"[^"]+")*)\s*:"#, options: .anchorsMatchLines)
        var types = Set<String>()
        for match in expression.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            let list = String(source[Range(match.range(at: 1), in: source)!])
            for literal in list.split(separator: ",") {
                types.insert(literal.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            }
        }
        return types
    }

    /// What a parser that knows everything (every capability, the `presentation` gate) makes of
    /// a message, by its shape alone.
    static let parser = BridgeParser(capabilities: [Capability.revalidateFeedback, Capability.liveWidgetCreation, Capability.nativeDialog],
                                     loadingGate: .presentation)

    /// The differences between two sets of event types, one line each (empty: they agree).
    static func differences(decoder: Set<String>, schemas: Set<String>) -> [String] {
        decoder.subtracting(schemas).sorted().map { "the decoder accepts \($0) but no schema describes it" }
            + schemas.subtracting(decoder).sorted().map { "a schema describes \($0) but the decoder does not know it" }
    }

    @Test func theDecoderAcceptsExactlyTheWebToNativeSchemasTypes() throws {
        let contract = try Self.contract.get()
        let decoder = try Self.decoderTypes()
        #expect(decoder.count >= 10, "the scan of BridgeParser.swift found only \(decoder.sorted())")
        for type in decoder {
            #expect(Self.parser.parse(type: type, message: ["type": .string(type)]) != .ignored(.unknownEvent),
                    "the scan found \(type) but the parser does not know it")
        }
        #expect(Self.parser.parse(type: "todayPage.noSuchEvent", message: ["type": "todayPage.noSuchEvent"]) == .ignored(.unknownEvent))
        #expect(Self.differences(decoder: decoder, schemas: Set(contract.webToNative.keys)) == [])
    }

    /// A union's `oneOf` is its mapping's schemas, and each schema's `type` const is its key.
    static func unionProblems(_ contract: Contract, union: String, mapping: [String: String]) -> [String] {
        var problems: [String] = []
        let members = (contract.validator.schemas[union]?["oneOf"]?.arrayValue ?? []).compactMap { $0["$ref"]?.stringValue }
        let named = Set(mapping.values.map { "#/components/schemas/\($0)" })
        if Set(members) != named || members.count != named.count {
            problems.append("\(union): oneOf \(members.sorted()) is not the mapping's \(named.sorted())")
        }
        for (type, name) in mapping {
            guard let schema = contract.validator.schemas[name] else {
                problems.append("\(union): \(type) maps to \(name), which does not exist")
                continue
            }
            if schema["properties"]?["type"]?["const"] != .string(type) {
                problems.append("\(union): \(name).type is not const \(type)")
            }
            if !(schema["required"]?.arrayValue ?? []).contains("type") { problems.append("\(union): \(name) does not require type") }
        }
        return problems
    }

    @Test func eachUnionMapsEveryTypeToItsSchemaAndItsReturnValue() throws {
        let contract = try Self.contract.get()
        #expect(Self.unionProblems(contract, union: "WebToNativeEvent", mapping: contract.webToNative) == [])
        #expect(Self.unionProblems(contract, union: "NativeToWebEvent", mapping: contract.nativeToWeb) == [])
        #expect(Set(contract.bridge.keys) == Set(contract.webToNative.keys), "x-todaysim-bridge lists other types than the mapping")
        for (type, call) in contract.bridge {
            for name in [call.returns, call.answer].compactMap({ $0 }) {
                #expect(contract.validator.schemas[name] != nil, "\(type) names \(name), which does not exist")
            }
            // A todayPage.* call resolves undefined in the page and null over HTTP (H21).
            if type.hasPrefix("todayPage.") { #expect(call.returns == nil && call.answer == nil, "\(type)") }
        }
        // `WebEvent` (the endpoint's body) is this union plus the catch-all, and the catch-all
        // excludes exactly this union's members.
        let typed = Set(contract.webToNative.values.map { "#/components/schemas/\($0)" })
        let webEvent = (contract.validator.schemas["WebEvent"]?["oneOf"]?.arrayValue ?? []).compactMap { $0["$ref"]?.stringValue }
        #expect(Set(webEvent) == typed.union(["#/components/schemas/RawWebEvent"]))
        let excluded = (contract.validator.schemas["RawWebEvent"]?["not"]?["anyOf"]?.arrayValue ?? []).compactMap { $0["$ref"]?.stringValue }
        #expect(Set(excluded) == typed)
    }

    // MARK: The engine against the schemas

    /// What the sessions of a run showed, gathered for the coverage checks at the end.
    struct Seen {
        var emitted = Set<String>()
        var parsed = Set<String>()
        var answers = Set<String>()
        var settlements = Set<String>()
        var entries = 0
        var failures: [String] = []

        mutating func check(_ problems: [String], _ what: @autoclosure () -> String) {
            guard !problems.isEmpty, failures.count < 20 else { return }
            failures.append("\(what()): \(problems.joined(separator: "; "))")
        }
    }

    /// Sessions that reach what random ones rarely do: a dialog opened, refused as busy, chosen
    /// and dismissed (a route that advertises `native_dialog.v1`), the silent soft requests, a
    /// scroll command.
    static func scriptedSessions() -> [(SessionConfig, [Input])] {
        let dialog: JSON = ["type": "nativeDialog.present", "title": "Delete?",
                            "actions": [["actionId": "delete", "title": "Delete", "role": "destructive"], ["actionId": "keep", "title": "Keep"]]]
        var edit = SessionConfig(uid: "u1")
        edit.route = "/embed/feeds/v1/edit"
        return [
            (edit, [.webEvent(dialog), .webEvent(dialog), .gesture(.dialogChoose(actionId: "delete")), .webEvent(dialog),
                    .gesture(.dialogDismiss), .webEvent(dialog), .lifecycle(.accountSwitch(uid: "u2")),
                    .webEvent(["type": "liveWidgetCreation.present"])]),
            (SessionConfig(uid: "u1"), [.lifecycle(.socketEvent(requestId: nil)), .lifecycle(.timerTick(requestId: "t-1")),
                                        .command(.scrollToSection(batchId: "b1", behavior: .smooth, highlight: true)),
                                        .lifecycle(.background), .clock(.advanceBy(6_000)), .lifecycle(.foreground(requestId: nil)),
                                        .webEvent(["type": "liveWidgetCreation.present"]), .webEvent(["type": "liveWidgetCreation.present"]),
                                        .webEvent(dialog), .teardown]),
        ]
    }

    /// One input applied and everything it produced checked against the contract.
    static func apply(_ input: Input, to runner: inout SessionRunner, _ contract: Contract, _ seen: inout Seen) {
        guard let applied = try? runner.apply(input) else { return }  // a refused input leaves nothing
        let label = "\(runner.session.id) \(input.json.serialized())"
        for entry in applied.entries {
            seen.entries += 1
            let json = entry.json
            seen.check(contract.problems(json, "TimelineEntry"), "\(label): entry \(json.serialized())")
            switch entry.kind {
            case .emit:
                let payload = json["data"]?["payload"] ?? .null
                seen.emitted.insert(entry.type)
                seen.check(payload["type"] == .string(entry.type) ? [] : ["the entry's type is not the payload's"], label)
                seen.check(contract.problems(payload, "NativeToWebEvent"), "\(label): emitted \(payload.serialized())")
                if let name = contract.nativeToWeb[entry.type] { seen.check(contract.problems(payload, name), "\(label): as \(name)") }
            case .resolution:
                let value = json["data"]?["value"] ?? .null
                seen.settlements.insert(value["type"]?.stringValue ?? "?")
                seen.check(contract.problems(value, "NativeDialogSettlement"), "\(label): settled \(value.serialized())")
                // What the page's Promise resolves to once /bridge.js has the settlement.
                if let returns = contract.bridge[entry.type]?.returns {
                    seen.check(contract.problems(value, returns), "\(label): returns \(value.serialized())")
                }
            default:
                break
            }
        }
        seen.check(contract.problems(runner.session.view, "SessionView"), "\(label): the session view")
        seen.check(contract.problems(runner.session.view["document"]?["injected"] ?? .null, "TodayWebView"), "\(label): injected")
        guard case let .webEvent(message) = input, let type = message["type"]?.stringValue else {
            seen.check(applied.resolution == .null ? [] : ["an input that is no Web event resolved \(applied.resolution.serialized())"], label)
            return
        }
        if case .event = parser.parse(type: type, message: message) { seen.parsed.insert(type) }
        let resolutionSchema = contract.validator.schemas["InputResponse"]?["properties"]?["resolution"] ?? .null
        seen.check((try? contract.validator.problems(applied.resolution, schema: resolutionSchema, path: "resolution")) ?? ["unreadable"],
                   "\(label): resolution \(applied.resolution.serialized())")
        guard let call = contract.bridge[type], let answer = call.answer else {
            seen.check(applied.resolution == .null ? [] : ["resolved \(applied.resolution.serialized()), the contract says null"], label)
            return
        }
        // A message that breaks its shape resolves `undefined` whatever its type (H21).
        if case .rejected = applied.outcome {
            seen.check(applied.resolution == .null ? [] : ["a rejected message resolved \(applied.resolution.serialized())"], label)
            return
        }
        seen.answers.insert(applied.resolution["pending"] != nil ? "pending" : applied.resolution.serialized())
        seen.check(contract.problems(applied.resolution, answer), "\(label): answered \(applied.resolution.serialized())")
        // /bridge.js resolves the answer itself unless it is pending (then the settlement, above).
        if applied.resolution["pending"] == nil, let returns = call.returns {
            seen.check(contract.problems(applied.resolution, returns), "\(label): returns \(applied.resolution.serialized())")
        }
    }

    @Test func everythingTheEngineSendsConformsToTheContract() throws {
        let contract = try Self.contract.get()
        var seen = Seen()
        for (config, inputs) in Self.scriptedSessions() {
            var runner = try SessionRunner(id: "scripted", config: config)
            for input in inputs { Self.apply(input, to: &runner, contract, &seen) }
        }
        let run = TracePropertyRun.shared
        let sessions = min(run.sessions, 400)
        print("BridgeContractTests: \(sessions) random sessions from seed \(run.seed) (TODAYSIM_TRACE_SEED replays them)")
        for index in 0..<sessions {
            let scenario = run.scenario(index)
            var runner = try SessionRunner(id: scenario.sessionId, config: scenario.config)
            for input in scenario.steps { Self.apply(input, to: &runner, contract, &seen) }
        }
        #expect(seen.failures.isEmpty, "\(seen.failures.count) value(s) break the contract:\n\(seen.failures.joined(separator: "\n"))")
        // Every schema was exercised: a type the engine never produced proves nothing.
        #expect(seen.emitted == Set(contract.nativeToWeb.keys), "emitted \(seen.emitted.sorted())")
        #expect(seen.parsed == Set(contract.webToNative.keys), "parsed \(seen.parsed.sorted())")
        #expect(seen.answers.isSuperset(of: ["pending", #"{"type":"busy"}"#, #"{"type":"unavailable"}"#, #"{"presented":true}"#,
                                             #"{"presented":false}"#]), "answers \(seen.answers.sorted())")
        #expect(seen.settlements == ["action", "dismissed"], "settlements \(seen.settlements.sorted())")
        print("BridgeContractTests: \(seen.entries) timeline entries checked; emitted \(seen.emitted.count) native → Web types")
    }

    // MARK: The decoder and the schemas agree on every shape

    /// A well-formed message of every type the decoder knows.
    static let wellFormed: [JSON] = [
        ["type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "r1", "presentation": "header"],
        ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "r1", "mode": "soft", "status": "succeeded",
         "loadId": "l1", "terminalEvent": "allBatchesRendered", "elapsedMs": .double(12.5),
         "error": ["stage": "loadBatches", "status": 503, "code": "x", "message": "unavailable"]],
        ["type": "todayPage.firstBatchRendered", "schemaVersion": 1, "batchId": "b1", "elapsedMs": 10, "requestId": "r1"],
        ["type": "todayPage.allBatchesRendered", "schemaVersion": 1, "status": "partial", "empty": false, "elapsedMs": 0, "requestId": "r1"],
        ["type": "todayPage.loadFailed", "schemaVersion": 1, "error": "network", "elapsedMs": 3, "requestId": "r1"],
        ["type": "webView.loadingPresentation", "schemaVersion": 1, "owner": "web", "reason": "placeholders_visible"],
        ["type": "track", "schemaVersion": 1, "event": "tap", "properties": ["x": 1]],
        ["type": "webView.navigationAction", "schemaVersion": 1, "url": "today://chat?text=hi"],
        ["type": "liveWidgetCreation.present", "schemaVersion": 1],
        ["type": "nativeDialog.present", "schemaVersion": 1, "title": "Delete?",
         "actions": [["actionId": "a", "title": "A", "role": "destructive"], ["actionId": "b", "title": "B"]]],
    ]

    /// Values put in place of a field: every JSON type, and the edges the rules draw.
    static let replacements: [JSON] = [.null, 0, 1, -1, .double(1.5), .double(-0.5), 2, "", "x", "header", "soft", "hard", "succeeded",
                                       "partial", "failed", "cancelled", "loadFailed", true, false, [:], ["a": 1], [], ["x"], [[:]],
                                       ["stage": "mountFeedCanvas", "message": "m"], ["stage": "render", "message": "m"],
                                       [["actionId": "a", "title": "A"]], [["actionId": "", "title": "A"]], [["actionId": "a"]],
                                       [["title": "A"]], [["actionId": "a", "title": 1]], [["actionId": "a", "title": "A", "role": 5]],
                                       [["actionId": "a", "title": "A", "role": .null]], ["x", ["actionId": "a", "title": "A"]]]

    /// The message as its schema reads it: an optional field given as `null` counts as absent
    /// (H21; `RawWebEvent` says the typed schemas spell it by leaving it out).
    static func withoutNulls(_ value: JSON) -> JSON {
        switch value {
        case let .object(members): return .object(members.filter { !$0.1.isNull }.map { ($0.0, withoutNulls($0.1)) })
        case let .array(items): return .array(items.map(withoutNulls))
        default: return value
        }
    }

    @Test func theDecoderAcceptsAWebMessageExactlyWhenItsSchemaDoes() throws {
        let contract = try Self.contract.get()
        #expect(Set(Self.wellFormed.compactMap { $0["type"]?.stringValue }) == Set(contract.webToNative.keys))
        var disagreements: [String] = []
        var compared = 0
        for base in Self.wellFormed {
            guard case let .object(members) = base, let type = base["type"]?.stringValue else { continue }
            var variants: [JSON] = [base]
            let fields = members.map(\.0).filter { $0 != "type" }
            for field in fields {
                variants.append(.object(members.filter { $0.0 != field }))
                for value in Self.replacements {
                    variants.append(.object(members.map { $0.0 == field ? ($0.0, value) : $0 }))
                }
            }
            for variant in variants {
                compared += 1
                let decoded: Bool
                switch Self.parser.parse(type: type, message: variant) {
                case .event: decoded = true
                case .rejected: decoded = false
                case let .ignored(reason):
                    disagreements.append("\(variant.serialized()): ignored (\(reason)) by a parser that knows every event")
                    continue
                }
                let valid = contract.hostProblems(Self.withoutNulls(variant)).isEmpty
                if decoded != valid {
                    disagreements.append("\(variant.serialized()): the decoder \(decoded ? "accepts" : "rejects") it, the schema \(valid ? "accepts" : "rejects") it")
                }
            }
        }
        print("BridgeContractTests: \(compared) Web → native messages judged by the decoder and the schemas")
        #expect(compared > 500)
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreement(s):\n\(disagreements.prefix(20).joined(separator: "\n"))")
        // The one rule no JSON Schema keyword expresses (WebToNativeEvent says so): distinct ids.
        let repeated: JSON = ["type": "nativeDialog.present", "title": "T",
                              "actions": [["actionId": "a", "title": "A"], ["actionId": "a", "title": "B"]]]
        #expect(contract.problems(repeated, "WebToNativeEvent").isEmpty)
        guard case let .rejected(rejection) = Self.parser.parse(type: "nativeDialog.present", message: repeated) else {
            Issue.record("the decoder took a dialog whose action ids repeat")
            return
        }
        #expect(rejection.field == "actions[1].actionId")
    }

    // MARK: The checks can fail

    /// A payload, answer or type list that breaks the contract is caught: these are the
    /// mismatches the tests above would report if the engine or the document drifted.
    @Test func plantedMismatchesAreCaught() throws {
        let contract = try Self.contract.get()
        var runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        let pulled = try runner.apply(.gesture(.pull(requestId: "p1")))
        let emitted = try #require(pulled.entries.first { $0.kind == .emit }?.json["data"]?["payload"])
        #expect(contract.problems(emitted, "NativeToWebEvent") == [])

        var planted: [(String, JSON, String)] = []
        guard case let .object(members) = emitted else { Issue.record("the payload is no object"); return }
        planted.append(("an extra field", .object(members + [("extra", 1)]), "NativeToWebEvent"))
        planted.append(("an unknown reason", .object(members.map { $0.0 == "reason" ? ($0.0, "pull") : $0 }), "NativeToWebEvent"))
        planted.append(("schemaVersion 2", .object(members.map { $0.0 == "schemaVersion" ? ($0.0, 2) : $0 }), "NativeToWebEvent"))
        planted.append(("no requestId", .object(members.filter { $0.0 != "requestId" }), "NativeToWebEvent"))
        planted.append(("a type no schema has", .object(members.map { $0.0 == "type" ? ($0.0, "todayPage.refreshWanted") : $0 }), "NativeToWebEvent"))
        planted.append(("visible as a string", ["type": "webView.visibilityChanged", "schemaVersion": 1, "visible": "yes"], "NativeToWebEvent"))
        planted.append(("a scroll without highlight", ["type": "todayPage.scrollToSection", "schemaVersion": 1, "batchId": "b", "behavior": "auto"], "NativeToWebEvent"))
        planted.append(("presented as a string", ["presented": "yes"], "LiveWidgetCreationResult"))
        planted.append(("a choice without its action", ["type": "action"], "NativeDialogResult"))
        planted.append(("a pending answer as a page's value", ["pending": "c1"], "NativeDialogResult"))
        planted.append(("a surface other than embedded", ["platform": "ios", "surface": "sheet", "capabilities": []], "TodayWebView"))
        for (what, value, schema) in planted {
            #expect(!contract.problems(value, schema).isEmpty, "\(what) passed \(schema): \(value.serialized())")
        }

        // The protocol is stricter than the host (x-todaysim-host-accepts): a misspelt status, an
        // unknown terminal event or an error without its stage breaks the schema, yet the host
        // takes each (H7) — and a mode outside the two it rejects, as the schema does.
        let result: JSON = ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "r1", "mode": "soft", "status": "succeeded"]
        guard case let .object(fields) = result else { Issue.record("the result is no object"); return }
        #expect(contract.problems(result, "WebToNativeEvent") == [] && contract.hostProblems(result) == [])
        let beyondTheProtocol: [(String, JSON)] = [("status", "succeded"), ("terminalEvent", "firstBatchPainted"), ("error", ["message": "down"])]
        for (field, value) in beyondTheProtocol {
            let lenient = JSON.object(fields.filter { $0.0 != field } + [(field, value)])
            #expect(!contract.problems(lenient, "WebToNativeEvent").isEmpty, "\(field) \(value.serialized()) passed the protocol's schema")
            #expect(contract.hostProblems(lenient) == [], "the host's reading refused \(field) \(value.serialized())")
            guard case .event = Self.parser.parse(type: "todayPage.refreshResult", message: lenient) else {
                Issue.record("the decoder refused \(lenient.serialized())")
                continue
            }
        }
        let badMode = JSON.object(fields.map { $0.0 == "mode" ? ($0.0, "gentle") : $0 })
        #expect(!contract.hostProblems(badMode).isEmpty)

        // A type the decoder would know and no schema describes, or the reverse.
        var schemaTypes = Set(contract.webToNative.keys)
        schemaTypes.remove("track")
        #expect(Self.differences(decoder: try Self.decoderTypes(), schemas: schemaTypes)
            == ["the decoder accepts track but no schema describes it"])
        #expect(Self.differences(decoder: try Self.decoderTypes(), schemas: Set(contract.webToNative.keys).union(["todayPage.extra"]))
            == ["a schema describes todayPage.extra but the decoder does not know it"])
    }
}

extension JSON {
    /// The keys of an object, in order (none for anything else).
    var objectKeys: [String] {
        guard case let .object(members) = self else { return [] }
        return members.map(\.0)
    }
}
