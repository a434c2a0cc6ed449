/// The OpenAPI document of the service (`OpenAPI/todaysim.yaml`), built into the binary
/// (Plugins/EmbedFiles) and served at `/openapi.yaml`.
public enum OpenAPIDocument {
    public static let bytes: [UInt8] = todaysimYaml

    public static var text: String { String(decoding: bytes, as: UTF8.self) }
}
