//! The base protocol: `Content-Length` framed JSON messages. A server's stdout must carry
//! nothing else; headers are capped at 64 KiB and a body at 32 MiB, as Claude Code caps them,
//! so a hostile server cannot make the client buffer without bound.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Longest header block.
pub const MAX_HEADER_BYTES: usize = 64 << 10;
/// Longest message body.
pub const MAX_BODY_BYTES: usize = 32 << 20;

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream ended between messages.
    #[error("the server closed its output")]
    Closed,
    /// Reading failed.
    #[error("reading from the server failed: {0}")]
    Io(#[from] std::io::Error),
    /// Not the base protocol.
    #[error("the server's output is not LSP framing: {0}")]
    Malformed(String),
}

/// Reads one message body.
pub async fn read_message<R: AsyncBufRead + Unpin>(r: &mut R) -> Result<Vec<u8>, FrameError> {
    let mut header_bytes = 0usize;
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = r
            .take((MAX_HEADER_BYTES - header_bytes + 1) as u64)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Err(if header_bytes == 0 {
                FrameError::Closed
            } else {
                FrameError::Malformed("the output ended inside a header".into())
            });
        }
        header_bytes += n;
        if header_bytes > MAX_HEADER_BYTES {
            return Err(FrameError::Malformed(format!(
                "headers longer than {MAX_HEADER_BYTES} bytes"
            )));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if length.is_none() && header_bytes <= 2 {
                // A stray blank line between messages.
                header_bytes = 0;
                continue;
            }
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(FrameError::Malformed(format!(
                "`{}` is not a header",
                text.chars().take(80).collect::<String>()
            )));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(value.trim().parse().map_err(|_| {
                FrameError::Malformed(format!("Content-Length `{}`", value.trim()))
            })?);
        }
    }
    let length =
        length.ok_or_else(|| FrameError::Malformed("a message without Content-Length".into()))?;
    if length > MAX_BODY_BYTES {
        return Err(FrameError::Malformed(format!(
            "a {length}-byte message (at most {MAX_BODY_BYTES})"
        )));
    }
    let mut body = vec![0u8; length];
    r.read_exact(&mut body).await?;
    Ok(body)
}

/// Writes one message.
pub async fn write_message<W: AsyncWrite + Unpin>(w: &mut W, body: &[u8]) -> std::io::Result<()> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    w.write_all(&out).await?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_limits_hold() {
        let mut buf = Vec::new();
        write_message(&mut buf, br#"{"a":1}"#).await.expect("write");
        write_message(&mut buf, b"{}").await.expect("write");
        let mut r = tokio::io::BufReader::new(buf.as_slice());
        assert_eq!(read_message(&mut r).await.expect("one"), br#"{"a":1}"#);
        assert_eq!(read_message(&mut r).await.expect("two"), b"{}");
        assert!(matches!(
            read_message(&mut r).await,
            Err(FrameError::Closed)
        ));

        let huge = format!("Content-Length: {}\r\n\r\n", MAX_BODY_BYTES + 1);
        let mut r = tokio::io::BufReader::new(huge.as_bytes());
        assert!(matches!(
            read_message(&mut r).await,
            Err(FrameError::Malformed(_))
        ));
        let long = format!("X-Pad: {}\r\n", "a".repeat(MAX_HEADER_BYTES));
        let mut r = tokio::io::BufReader::new(long.as_bytes());
        assert!(matches!(
            read_message(&mut r).await,
            Err(FrameError::Malformed(_))
        ));
        let mut r = tokio::io::BufReader::new(&b"hello world\r\n\r\n"[..]);
        assert!(matches!(
            read_message(&mut r).await,
            Err(FrameError::Malformed(_))
        ));
    }
}
