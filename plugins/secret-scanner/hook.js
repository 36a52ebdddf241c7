// secret-scanner: denies Write, Edit and MultiEdit calls whose new text holds a credential.
// The reason names the kind of secret and where it is, never the value itself.
import { hook, HookResult } from "warden";

// Each detector finds candidate values; `value` picks the secret out of a match (default: all of
// it). `hint`: literal text every match contains, checked first because it is much cheaper than
// the expression on large files (`anyCase`: in any case, like the expression).
const DETECTORS = [
  { kind: "AWS access key ID", hint: ["AKIA", "ASIA"], re: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g },
  {
    // Only in an assignment: a bare 40-character base64 string could be anything.
    kind: "AWS secret access key",
    hint: ["secret"],
    anyCase: true,
    re: /\b(aws[A-Za-z0-9_.-]{0,20}?secret[A-Za-z0-9_.-]{0,20}?|secret[_.-]?access[_.-]?key)["']?\s*(?::=|=>|[:=])\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
    value: (m) => m[2],
  },
  { kind: "private key (PEM)", hint: ["PRIVATE KEY"], re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g, pem: true },
  { kind: "GitHub token", hint: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], re: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b/g },
  { kind: "GitHub fine-grained token", hint: ["github_pat_"], re: /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g },
  { kind: "Slack token", hint: ["xox"], re: /\bxox[baprs]-[A-Za-z0-9-]{10,250}/g },
  { kind: "Stripe live secret key", hint: ["_live_"], re: /\b(?:sk|rk)_live_[A-Za-z0-9]{16,247}\b/g },
  { kind: "Google API key", hint: ["AIza"], re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { kind: "JSON Web Token", hint: ["eyJ"], re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g },
];

// Values that are documentation, not credentials: AWS's documented example keys
// (AKIAIOSFODNN7EXAMPLE, wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY), obvious stand-ins, and the
// example token of jwt.io.
const PLACEHOLDER_WORDS = /example|xxxx|your|dummy|placeholder|redacted|changeme|fake|1234567890|abcdefghij/i;
const JWT_IO_SIGNATURE = "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

function isPlaceholder(value) {
  if (PLACEHOLDER_WORDS.test(value) || value.endsWith(JWT_IO_SIGNATURE)) return true;
  // A body of one or two repeated characters (AKIA0000000000000000, ghp_aaaa...).
  const body = value.replace(/^(?:[A-Za-z]+_)+|^(?:AKIA|ASIA|AIza)|^xox[a-z]-/, "");
  return new Set(body).size <= 2;
}

// A PEM header counts only when key material follows it: the header alone is what scanners,
// docs and this very file contain.
function pemHasKeyMaterial(text, end) {
  let after = text.slice(end, end + 4096);
  const stop = after.indexOf("-----END");
  if (stop >= 0) after = after.slice(0, stop);
  return /[A-Za-z0-9+/=]{40,}/.test(after);
}

/** Line numbers (1-based) of offsets in `text`, from one pass over its newlines. */
function lineFinder(text) {
  let starts;
  return (index) => {
    if (starts === undefined) {
      starts = [0];
      for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** Findings in one piece of text: `{ kind, line }`, never the value. */
function scan(text) {
  const found = [];
  const seen = new Set();
  const lineOf = lineFinder(text);
  let lower;
  for (const d of DETECTORS) {
    const haystack = d.anyCase ? (lower ??= text.toLowerCase()) : text;
    if (!d.hint.some((h) => haystack.includes(h))) continue;
    for (const m of text.matchAll(d.re)) {
      if (d.pem ? !pemHasKeyMaterial(text, m.index + m[0].length) : isPlaceholder(d.value ? d.value(m) : m[0])) continue;
      const line = lineOf(m.index);
      const key = `${d.kind}:${line}`;
      if (!seen.has(key)) {
        seen.add(key);
        found.push({ kind: d.kind, line });
      }
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

function where(field, line) {
  if (field === "content") return `line ${line}`;
  const edit = /^edits\[(\d+)\]/.exec(field);
  if (edit) return `line ${line} of edit ${Number(edit[1]) + 1}`;
  return `line ${line} of ${field}`;
}

const MAX_LISTED = 5;

export const handle = hook((event) => {
  if (event.name !== "PreToolUse") return HookResult.none();
  const findings = [];
  for (const { field, text } of event.newTexts) {
    for (const f of scan(text)) findings.push(`${f.kind} (${where(field, f.line)})`);
  }
  if (findings.length === 0) return HookResult.none();
  const listed = findings.slice(0, MAX_LISTED).join(", ");
  const more = findings.length > MAX_LISTED ? ` and ${findings.length - MAX_LISTED} more` : "";
  const file = event.filePath ? ` to ${event.filePath}` : "";
  return HookResult.deny(
    `secret-scanner: this ${event.toolName}${file} would write ${findings.length === 1 ? "a credential" : "credentials"}: ${listed}${more}. ` +
      `${findings.length === 1 ? "The value is" : "The values are"} not repeated here. ` +
      "Keep secrets out of files: read them from the environment " +
      "or a secret store, or write an obvious placeholder (YOUR_API_KEY, or a value containing EXAMPLE).",
  );
});
