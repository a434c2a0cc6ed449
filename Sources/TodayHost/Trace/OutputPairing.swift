/// Pairing two time-ordered runs of one kind's outputs within a tolerance (docs/TRACES.md, "The
/// comparison and the verdict"): what the verifier does with a trace and its replay, and what
/// the comparison of two traces does with one trace and the other. `first` is the side whose
/// outputs are taken in order (the trace, trace A); `second` the side searched for their pairs
/// (the replay, trace B). `equal` says whether an output of `first` says what one of `second`
/// says (ids through binding).
enum OutputPairing {
    /// What is left between two pairs, in order.
    enum Leftover: Equatable {
        /// Equal content, beyond the tolerance (`late`/`early`; `apart`).
        case apart(Observed, Observed)
        /// The same `type` within the tolerance, other content.
        case different(Observed, Observed)
        /// Only in `first` (`unexpected`; `onlyA`).
        case onlyFirst(Observed)
        /// Only in `second` (`missing`; `onlyB`).
        case onlySecond(Observed)
    }

    /// The first output of `queue` (in time order) within `tolerance` of `output` that `equal`
    /// says matches it (its index in the slice's base): found by halving to the window, then
    /// looking in it only.
    static func pairIndex(of output: Observed, in queue: ArraySlice<Observed>, tolerance: Millis,
                          equal: (Observed, Observed) -> Bool) -> Int? {
        let earliest = output.atMs - tolerance, latest = output.atMs + tolerance
        var low = queue.startIndex, high = queue.endIndex
        while low < high {
            let middle = (low + high) / 2
            if queue[middle].atMs < earliest { low = middle + 1 } else { high = middle }
        }
        while low < queue.endIndex, queue[low].atMs <= latest {
            if equal(output, queue[low]) { return low }
            low += 1
        }
        return nil
    }

    /// Whether pairing `output` with `queue[index]` would pass over outputs of `queue` that the
    /// next outputs of `first` (`later`, of the same kind, in order) account for better: the
    /// next one pairs with one of them, whichever place it has, and with nothing after the
    /// greedy pair (then `output` is the leftover, a duplicate, or an output changed into what a
    /// later one says), or `output` says what one of them says, only late or early, while the
    /// later ones that say what `queue[index]` says cannot all pair in time after it. Pairs
    /// never cross, so a greedy pair there would leave both the passed-over output and a later
    /// one unpaired; where each later one has an equal output of its own in time, the pair in
    /// time stands, and the passed-over output is the one the trace lacks (an exact-time pair
    /// beats a later one).
    static func skipsWhatTheNextPairs(_ output: Observed, later: [Observed], queue: ArraySlice<Observed>, index: Int, tolerance: Millis,
                                      lookahead: Int, equal: (Observed, Observed) -> Bool) -> Bool {
        guard index > queue.startIndex else { return false }
        if let next = later.first,
           let passed = queue[..<index].firstIndex(where: { abs(next.atMs - $0.atMs) <= tolerance && equal(next, $0) }),
           !equal(output, queue[passed]),
           !queue[(index + 1)...].prefix(lookahead).contains(where: { abs($0.atMs - next.atMs) <= tolerance && equal(next, $0) })
        {
            return true
        }
        guard queue[..<index].contains(where: { equal(output, $0) }) else { return false }
        // The later ones that say what the greedy pair says, each given the first equal output in
        // time after it that none before took (one whose output the replay has not made yet
        // finds none, and `output` stays the leftover, as before the replay gets there).
        var spare = Array(queue[(index + 1)...].prefix(lookahead))
        let claimants = later.filter { equal($0, queue[index]) }
        for claimant in claimants {
            guard let taken = spare.firstIndex(where: { abs($0.atMs - claimant.atMs) <= tolerance && equal(claimant, $0) }) else { return true }
            spare.remove(at: taken)
        }
        return false
    }

    /// Between two pairs: leftovers pair in order as `apart` (equal content, or `loose`ly equal
    /// beyond the tolerance: a loose match within it has content of its own, so it is
    /// `different`) or `different` (same type, within the tolerance, not `onlyPairs`); the rest
    /// are only on one side. A pair is looked for among the next `lookahead` outputs of `second`
    /// only, so a long stretch without pairs costs a bounded time per output. `onlyPairs`: an
    /// output of `second` that pairs with equal content or not at all (one due after the
    /// recording stopped).
    static func leftovers(first: [Observed], second: [Observed], tolerance: Millis, lookahead: Int,
                          equal: (Observed, Observed) -> Bool, loose: (Observed, Observed) -> Bool,
                          onlyPairs: (Observed) -> Bool = { _ in false }) -> [Leftover] {
        var found: [Leftover] = []
        var next = 0
        for output in first {
            let rest = second[next..<min(second.count, next + lookahead)]
            if let index = rest.firstIndex(where: { equal(output, $0) || loose(output, $0) }),
               equal(output, second[index]) || abs(second[index].atMs - output.atMs) > tolerance
            {
                found += second[next..<index].map(Leftover.onlySecond)
                found.append(.apart(output, second[index]))
                next = index + 1
            } else if let index = rest.firstIndex(where: {
                $0.type == output.type && abs($0.atMs - output.atMs) <= tolerance && !onlyPairs($0)
            }) {
                found += second[next..<index].map(Leftover.onlySecond)
                found.append(.different(output, second[index]))
                next = index + 1
            } else {
                found.append(.onlyFirst(output))
            }
        }
        found += second[next...].map(Leftover.onlySecond)
        return found
    }
}
