//! The one error type of hermesctl: a single actionable line, printed as `hermesctl: …`.

use hermes_proto::client::{ConnectError, describe_status};

#[derive(Debug)]
pub struct CliError {
    pub message: String,
    /// Process exit code (1 unless a command says otherwise).
    pub code: u8,
}

impl CliError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: 1,
        }
    }

    pub fn with_code(mut self, code: u8) -> Self {
        self.code = code;
        self
    }
}

impl From<tonic::Status> for CliError {
    fn from(status: tonic::Status) -> Self {
        Self::new(describe_status(&status))
    }
}

impl From<ConnectError> for CliError {
    fn from(e: ConnectError) -> Self {
        Self::new(e.to_string())
    }
}

impl From<hermes_proto::place::PlaceError> for CliError {
    fn from(e: hermes_proto::place::PlaceError) -> Self {
        Self::new(e.to_string())
    }
}
