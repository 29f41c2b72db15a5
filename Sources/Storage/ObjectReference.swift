/// Which object a stored reference (a `profiles.avatar_url` value) names, if any.
public enum ObjectReference {
    /// The object name `reference` points to in `bucket`: a bare path (`abc.jpeg`), the same with a leading slash,
    /// or a full `…/storage/v1/object/public|authenticated|sign/<bucket>/<path>` URL (query string dropped,
    /// percent-escapes decoded). An external URL, a URL into another bucket, or an empty value names none.
    public static func objectName(_ reference: String?, bucket: String) -> String? {
        guard var text = reference.map({ Substring($0).trimmed() }), !text.isEmpty else { return nil }
        if text.hasPrefix("http://") || text.hasPrefix("https://") {
            guard let marker = text.range(of: "/storage/v1/object/") else { return nil }
            text = String(text[marker.upperBound...])
            if let query = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = String(text[..<query]) }
            for kind in ["public/", "authenticated/", "sign/"] where text.hasPrefix(kind) {
                text.removeFirst(kind.count)
                break
            }
            guard text.hasPrefix(bucket + "/") else { return nil }
            text.removeFirst(bucket.count + 1)
            guard let decoded = text.removingPercentEncoding(), !decoded.isEmpty else { return nil }
            return decoded
        }
        while text.hasPrefix("/") { text.removeFirst() }
        return text.isEmpty ? nil : text
    }
}

extension Substring {
    func trimmed() -> String {
        var s = self
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}

extension String {
    /// `%20` → space; nil when an escape is malformed.
    func removingPercentEncoding() -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
