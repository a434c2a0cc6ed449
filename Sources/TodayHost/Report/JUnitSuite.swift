/// One JUnit XML document of one test suite, as a host trace's verdict and a comparison of two
/// traces answer `format=junit`: a test case per kind, each finding a failure.
struct JUnitSuite {
    struct Failure {
        var message: String
        /// The rule the failure names.
        var type: String
        var text: String
    }

    struct Case {
        var className: String
        var name: String
        var failures: [Failure]
    }

    var name: String
    var cases: [Case]

    /// `failures` counts failing cases, as JUnit does.
    var xml: String {
        let failed = cases.filter { !$0.failures.isEmpty }.count
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"todaysim\" tests=\"\(cases.count)\" failures=\"\(failed)\">\n"
        xml += "  <testsuite name=\"\(XML.escaped(name))\" tests=\"\(cases.count)\" failures=\"\(failed)\" errors=\"0\">\n"
        for testCase in cases {
            xml += "    <testcase classname=\"\(XML.escaped(testCase.className))\" name=\"\(XML.escaped(testCase.name))\""
            guard !testCase.failures.isEmpty else {
                xml += "/>\n"
                continue
            }
            xml += ">\n"
            for failure in testCase.failures {
                xml += "      <failure message=\"\(XML.escaped(failure.message))\" type=\"\(XML.escaped(failure.type))\">\(XML.escaped(failure.text))</failure>\n"
            }
            xml += "    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }
}
