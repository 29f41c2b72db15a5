/// The rule that decides deletion: **an object is deleted only if no reference value, read as text, mentions it**,
/// where a value mentions an object when the object's last path segment (its name when it has no folders) occurs
/// anywhere in the value, as written or in any of the forms text takes for a URL or a path: percent-decoded (once,
/// twice, with `+` for a space), JSON- and Python-unescaped (`\/`, `\uXXXX`, `\xXX`), HTML-unescaped (`&amp;`,
/// `&#233;`, `&eacute;`), in NFC and NFD, and without invisible format characters (a left-to-right mark, a zero-width
/// space). The full name holds its last segment, so a value that mentions the full name mentions the segment.
///
/// It recognises no form: quotes, brackets, markup, lists, a CDN's path, a proxy's `?url=` or a second URL around
/// the name change nothing, so no form an app invents can lose an object. What it over-keeps (an object whose
/// segment is also part of another name, `a.png` inside `ba.png`) only stays. The exact reading (`ObjectReference`)
/// remains the fast path that takes most objects off the list first and feeds the reports; it can only add keeps.
///
/// One definition, used by the scan, both re-checks before a deletion: the texts of a value and the patterns of a
/// name are computed here, in SQL; which patterns occur in which texts is `MentionMatcher` (bytes in bytes).
public enum ObjectMention {
    /// Characters that change nothing on screen (Unicode's default-ignorable format characters): a value copied
    /// from a right-to-left interface carries them around, or inside, a name.
    static let invisible = #"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"#

    /// An SQL expression (a `text`) over the SQL expression `value`: the text in which mentions are looked for. A
    /// value with none of `%`, `&`, `+` and `\` and no byte beyond ASCII has no other form and is its own text,
    /// without a function call (the common plain name or URL: tests cheaper than one regular expression); any other
    /// value's texts are joined by newlines: a pattern found across two of them can only keep an object more.
    public static func textSQL(value: String, schema: String = "pg_temp") -> String {
        """
        case when strpos(\(value), '%') = 0 and strpos(\(value), '&') = 0 and strpos(\(value), '+') = 0 and strpos(\(value), chr(92)) = 0
                  and octet_length(\(value)) = length(\(value))
             then \(value) else array_to_string(\(schema).steward_mention_texts(\(value)), chr(10)) end
        """
    }

    /// An SQL expression (a `text[]`) over the SQL expression `name`, an object's name: the patterns whose occurrence
    /// in a text means a mention (its last segment, trailing `/` dropped, in every normal form and without invisible
    /// characters). An empty pattern (a name of slashes) occurs in every text: such an object is always kept.
    public static func patternsSQL(name: String, schema: String = "pg_temp") -> String {
        "case when octet_length(\(name)) = length(\(name)) then array[\(asciiPatternSQL(name: name))] else \(schema).steward_mention_patterns(\(name)) end"
    }

    /// The one pattern of a name that is all ASCII (`octet_length = length`): its last segment, as `patternsSQL` gives it.
    public static func asciiPatternSQL(name: String) -> String {
        "split_part(rtrim(\(name), '/'), '/', -1)"
    }

    /// HTML 4's named character references (and `&apos;`), as JSON: entity name to character.
    static let entities = #"{"AElig":"\u00c6","Aacute":"\u00c1","Acirc":"\u00c2","Agrave":"\u00c0","Alpha":"\u0391","Aring":"\u00c5","Atilde":"\u00c3","Auml":"\u00c4","Beta":"\u0392","Ccedil":"\u00c7","Chi":"\u03a7","Dagger":"\u2021","Delta":"\u0394","ETH":"\u00d0","Eacute":"\u00c9","Ecirc":"\u00ca","Egrave":"\u00c8","Epsilon":"\u0395","Eta":"\u0397","Euml":"\u00cb","Gamma":"\u0393","Iacute":"\u00cd","Icirc":"\u00ce","Igrave":"\u00cc","Iota":"\u0399","Iuml":"\u00cf","Kappa":"\u039a","Lambda":"\u039b","Mu":"\u039c","Ntilde":"\u00d1","Nu":"\u039d","OElig":"\u0152","Oacute":"\u00d3","Ocirc":"\u00d4","Ograve":"\u00d2","Omega":"\u03a9","Omicron":"\u039f","Oslash":"\u00d8","Otilde":"\u00d5","Ouml":"\u00d6","Phi":"\u03a6","Pi":"\u03a0","Prime":"\u2033","Psi":"\u03a8","Rho":"\u03a1","Scaron":"\u0160","Sigma":"\u03a3","THORN":"\u00de","Tau":"\u03a4","Theta":"\u0398","Uacute":"\u00da","Ucirc":"\u00db","Ugrave":"\u00d9","Upsilon":"\u03a5","Uuml":"\u00dc","Xi":"\u039e","Yacute":"\u00dd","Yuml":"\u0178","Zeta":"\u0396","aacute":"\u00e1","acirc":"\u00e2","acute":"\u00b4","aelig":"\u00e6","agrave":"\u00e0","alefsym":"\u2135","alpha":"\u03b1","amp":"&","and":"\u2227","ang":"\u2220","apos":"\u0027","aring":"\u00e5","asymp":"\u2248","atilde":"\u00e3","auml":"\u00e4","bdquo":"\u201e","beta":"\u03b2","brvbar":"\u00a6","bull":"\u2022","cap":"\u2229","ccedil":"\u00e7","cedil":"\u00b8","cent":"\u00a2","chi":"\u03c7","circ":"\u02c6","clubs":"\u2663","cong":"\u2245","copy":"\u00a9","crarr":"\u21b5","cup":"\u222a","curren":"\u00a4","dArr":"\u21d3","dagger":"\u2020","darr":"\u2193","deg":"\u00b0","delta":"\u03b4","diams":"\u2666","divide":"\u00f7","eacute":"\u00e9","ecirc":"\u00ea","egrave":"\u00e8","empty":"\u2205","emsp":"\u2003","ensp":"\u2002","epsilon":"\u03b5","equiv":"\u2261","eta":"\u03b7","eth":"\u00f0","euml":"\u00eb","euro":"\u20ac","exist":"\u2203","fnof":"\u0192","forall":"\u2200","frac12":"\u00bd","frac14":"\u00bc","frac34":"\u00be","frasl":"\u2044","gamma":"\u03b3","ge":"\u2265","gt":">","hArr":"\u21d4","harr":"\u2194","hearts":"\u2665","hellip":"\u2026","iacute":"\u00ed","icirc":"\u00ee","iexcl":"\u00a1","igrave":"\u00ec","image":"\u2111","infin":"\u221e","int":"\u222b","iota":"\u03b9","iquest":"\u00bf","isin":"\u2208","iuml":"\u00ef","kappa":"\u03ba","lArr":"\u21d0","lambda":"\u03bb","lang":"\u2329","laquo":"\u00ab","larr":"\u2190","lceil":"\u2308","ldquo":"\u201c","le":"\u2264","lfloor":"\u230a","lowast":"\u2217","loz":"\u25ca","lrm":"\u200e","lsaquo":"\u2039","lsquo":"\u2018","lt":"<","macr":"\u00af","mdash":"\u2014","micro":"\u00b5","middot":"\u00b7","minus":"\u2212","mu":"\u03bc","nabla":"\u2207","nbsp":"\u00a0","ndash":"\u2013","ne":"\u2260","ni":"\u220b","not":"\u00ac","notin":"\u2209","nsub":"\u2284","ntilde":"\u00f1","nu":"\u03bd","oacute":"\u00f3","ocirc":"\u00f4","oelig":"\u0153","ograve":"\u00f2","oline":"\u203e","omega":"\u03c9","omicron":"\u03bf","oplus":"\u2295","or":"\u2228","ordf":"\u00aa","ordm":"\u00ba","oslash":"\u00f8","otilde":"\u00f5","otimes":"\u2297","ouml":"\u00f6","para":"\u00b6","part":"\u2202","permil":"\u2030","perp":"\u22a5","phi":"\u03c6","pi":"\u03c0","piv":"\u03d6","plusmn":"\u00b1","pound":"\u00a3","prime":"\u2032","prod":"\u220f","prop":"\u221d","psi":"\u03c8","quot":"\"","rArr":"\u21d2","radic":"\u221a","rang":"\u232a","raquo":"\u00bb","rarr":"\u2192","rceil":"\u2309","rdquo":"\u201d","real":"\u211c","reg":"\u00ae","rfloor":"\u230b","rho":"\u03c1","rlm":"\u200f","rsaquo":"\u203a","rsquo":"\u2019","sbquo":"\u201a","scaron":"\u0161","sdot":"\u22c5","sect":"\u00a7","shy":"\u00ad","sigma":"\u03c3","sigmaf":"\u03c2","sim":"\u223c","spades":"\u2660","sub":"\u2282","sube":"\u2286","sum":"\u2211","sup":"\u2283","sup1":"\u00b9","sup2":"\u00b2","sup3":"\u00b3","supe":"\u2287","szlig":"\u00df","tau":"\u03c4","there4":"\u2234","theta":"\u03b8","thetasym":"\u03d1","thinsp":"\u2009","thorn":"\u00fe","tilde":"\u02dc","times":"\u00d7","trade":"\u2122","uArr":"\u21d1","uacute":"\u00fa","uarr":"\u2191","ucirc":"\u00fb","ugrave":"\u00f9","uml":"\u00a8","upsih":"\u03d2","upsilon":"\u03c5","uuml":"\u00fc","weierp":"\u2118","xi":"\u03be","yacute":"\u00fd","yen":"\u00a5","yuml":"\u00ff","zeta":"\u03b6","zwj":"\u200d","zwnj":"\u200c"}"#

    /// The body of `steward_mention_decode(t text, how int) returns text`: one decoding of `t`, or `t` when it has
    /// nothing to decode. `how`: 1 percent-escapes (runs that are not UTF-8, or hold a NUL, keep all but their ASCII
    /// escapes as written), 2 the same after `+` is read as a space, 3 backslash escapes (JSON's, JavaScript's
    /// `\u{…}`, Python's `\x..` and `\U…`; a lone surrogate or NUL stays as written), 4 HTML character references.
    static func decodeFunctionBody() -> String {
        #"""

declare
  r text := '';
  p text[];
  e text;
  code int;
  named jsonb;
begin
  if how = 1 or how = 2 then
    if how = 2 then
      if strpos(t, '+') = 0 then return t; end if;
      t := replace(t, '+', ' ');
    end if;
    if t !~ '%[0-9A-Fa-f]{2}' then return t; end if;
    for p in select x.p from regexp_matches(t, '((?:%[0-9A-Fa-f]{2})+)|([^%]+|%)', 'g') as x(p) loop
      if p[1] is null then r := r || p[2]; continue; end if;
      begin
        r := r || convert_from(decode(replace(p[1], '%', ''), 'hex'), 'UTF8');
      exception when others then
        r := r || (select string_agg(case when u.e ~ '^(0[1-9A-Fa-f]|[1-7][0-9A-Fa-f])$' then chr(('x' || u.e)::bit(8)::int) else '%' || u.e end, '' order by u.i)
                   from unnest(string_to_array(substr(p[1], 2), '%')) with ordinality as u(e, i));
      end;
    end loop;
    return r;
  elsif how = 3 then
    if strpos(t, chr(92)) = 0 then return t; end if;
    begin
      for p in select x.p from regexp_matches(t, '(\\u[dD][89abAB][0-9A-Fa-f]{2}\\u[dD][c-fC-F][0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\u\{[0-9A-Fa-f]{1,6}\}|\\U[0-9A-Fa-f]{8}|\\x[0-9A-Fa-f]{2}|\\["\\/bfnrt''])|([^\\]+|\\)', 'g') as x(p) loop
        if p[1] is null then r := r || p[2]; continue; end if;
        e := p[1];
        if length(e) = 2 then
          r := r || case substr(e, 2) when 'b' then chr(8) when 'f' then chr(12) when 'n' then chr(10) when 'r' then chr(13) when 't' then chr(9) else substr(e, 2) end;
          continue;
        end if;
        if length(e) = 12 and substr(e, 7, 1) = chr(92) then
          code := 65536 + (('x' || substr(e, 3, 4))::bit(16)::int - 55296) * 1024 + (('x' || substr(e, 9, 4))::bit(16)::int - 56320);
        elsif substr(e, 3, 1) = '{' then
          code := ('x' || lpad(substr(e, 4, length(e) - 4), 8, '0'))::bit(32)::int;
        else
          code := ('x' || lpad(substr(e, 3), 8, '0'))::bit(32)::int;
        end if;
        r := r || case when code between 1 and 1114111 and code not between 55296 and 57343 then chr(code) else e end;
      end loop;
      return r;
    exception when others then
      return t;
    end;
  else
    if strpos(t, '&') = 0 then return t; end if;
    begin
      for p in select x.p from regexp_matches(t, '&(#[xX][0-9A-Fa-f]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,7})(;?)|([^&]+|&)', 'g') as x(p) loop
        if p[1] is null then r := r || p[3]; continue; end if;
        code := null;
        if p[1] ~ '^#[xX]' then
          code := ('x' || lpad(substr(p[1], 3), 8, '0'))::bit(32)::int;
        elsif p[1] ~ '^#' then
          code := substr(p[1], 2)::int;
        else
          named := coalesce(named, '\#(entities)'::jsonb);
          if named ? p[1] then r := r || (named ->> p[1]); continue; end if;
        end if;
        r := r || case when code between 1 and 1114111 and code not between 55296 and 57343 then chr(code) else '&' || p[1] || p[2] end;
      end loop;
      return r;
    exception when others then
      return t;
    end;
  end if;
end;
"""#
    }

    /// The body of `steward_mention_texts(value text) returns text[]`: the value, then up to four rounds in which
    /// every text of the last round is decoded each of the four ways (a URL inside JSON inside HTML is read through),
    /// then each text's normal forms and the text without invisible characters. Every text is kept, decoded or not:
    /// decoding can only add places to look.
    static func textsFunctionBody(schema: String) -> String {
        """

declare
  forms text[] := array[value];
  level text[] := array[value];
  deeper text[];
  plain text[];
  t text;
  d text;
  e text;
begin
  if value is null then return '{}'; end if;
  for pass in 1 .. 4 loop
    deeper := '{}';
    foreach t in array level loop
      for how in 1 .. 4 loop
        d := \(schema).steward_mention_decode(t, how);
        if d is not null and not d = any(forms) then
          forms := forms || d;
          deeper := deeper || d;
        end if;
      end loop;
    end loop;
    exit when cardinality(deeper) = 0;
    level := deeper;
  end loop;
  if getdatabaseencoding() = 'UTF8' then
    plain := forms;
    foreach t in array plain loop
      continue when octet_length(t) = length(t);
      d := regexp_replace(t, '\(invisible)', '', 'g');
      foreach e in array array[d, normalize(t, NFC), normalize(t, NFD), normalize(d, NFC), normalize(d, NFD)] loop
        if not e = any(forms) then forms := forms || e; end if;
      end loop;
    end loop;
  end if;
  return forms;
end;
"""
    }

    /// The body of `steward_mention_patterns(name text) returns text[]` for names that are not plain ASCII (those are
    /// read inline by `patternsSQL`): the last segment, in NFC and NFD, and without invisible characters.
    static let patternsFunctionBody = """

declare
  segment text := split_part(rtrim(name, '/'), '/', -1);
  stripped text;
  forms text[];
  e text;
begin
  forms := array[segment];
  if getdatabaseencoding() = 'UTF8' and octet_length(segment) <> length(segment) then
    stripped := regexp_replace(segment, '\(invisible)', '', 'g');
    foreach e in array array[normalize(segment, NFC), normalize(segment, NFD), stripped, normalize(stripped, NFC), normalize(stripped, NFD)] loop
      if not e = any(forms) then forms := forms || e; end if;
    end loop;
  end if;
  return forms;
end;
"""

    /// `create function` statements for the three functions under `schema` (`pg_temp` for a run's own copy).
    public static func functionsSQL(schema: String) -> String {
        """
        create or replace function \(schema).steward_mention_decode(t text, how int)
        returns text
        language plpgsql immutable strict parallel safe
        as $body$\(decodeFunctionBody())$body$;
        create or replace function \(schema).steward_mention_texts(value text)
        returns text[]
        language plpgsql immutable parallel safe
        as $body$\(textsFunctionBody(schema: schema))$body$;
        create or replace function \(schema).steward_mention_patterns(name text)
        returns text[]
        language plpgsql immutable strict parallel safe
        as $body$\(patternsFunctionBody)$body$;
        """
    }
}
