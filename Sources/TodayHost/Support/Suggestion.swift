/// Did-you-mean for what a caller typed: an unknown field, input type or path names the known one
/// it most likely meant (the same rule everywhere, so every refusal reads alike).
package enum Suggestion {
    /// The known name a typo most likely meant: the one matching it but for case, else the one
    /// within edit distance 2 (none when two are equally near).
    package static func nearest(to key: String, among known: [String]) -> String? {
        if let same = known.first(where: { $0.lowercased() == key.lowercased() }) { return same }
        let typed = Array(key.lowercased().unicodeScalars)
        // A key far longer or shorter than every known name is no typo of one (and a long key
        // costs nothing to dismiss).
        let near = known.compactMap { field -> (String, Int)? in
            let candidate = Array(field.lowercased().unicodeScalars)
            guard abs(candidate.count - typed.count) <= 2 else { return nil }
            let distance = editDistance(typed, candidate)
            return distance <= 2 ? (field, distance) : nil
        }
        guard let best = near.map(\.1).min() else { return nil }
        let closest = near.filter { $0.1 == best }
        return closest.count == 1 ? closest[0].0 : nil
    }

    /// Levenshtein distance (insert, delete, substitute one scalar).
    package static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
