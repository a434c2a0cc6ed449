import TodayHost

// The HTTP service arrives with the service issue; until then the executable only names itself.
print("todaysim \(TodayHostVersion.string)")
