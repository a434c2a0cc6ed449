public enum TodayHostVersion { public static let string = "0.1.0" }
