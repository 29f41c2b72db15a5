/// Fixed-width columns of the control socket's text tables.
extension String {
    /// The text cut or filled with `pad` to `length` characters (the `pad` text repeats from its `startingAt` character).
    func padding(toLength length: Int, withPad pad: String, startingAt start: Int) -> String {
        if count >= length { return String(prefix(max(0, length))) }
        let padCharacters = Array(pad)
        guard !padCharacters.isEmpty else { return self }
        var text = self
        var i = max(0, start) % padCharacters.count
        while text.count < length {
            text.append(padCharacters[i])
            i = (i + 1) % padCharacters.count
        }
        return text
    }
}
