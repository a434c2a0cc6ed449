import Foundation

/// The OpenAPI document of the service (`OpenAPI/todaysim.yaml`), served at `/openapi.yaml`.
public enum OpenAPIDocument {
    public static let bytes: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "todaysim", withExtension: "yaml"),
              let data = try? Data(contentsOf: url)
        else { return Array("openapi: 3.1.0\n".utf8) }
        return Array(data)
    }()

    public static var text: String { String(decoding: bytes, as: UTF8.self) }
}
