//! The file tools' side of the write rules: [`crate::policy::paths::PathPolicy`] decides, this
//! asks the user when the decision is "with consent" and tells the model a refusal.

use std::path::PathBuf;

use super::{ApprovalDecision, ApprovalRequest, ToolContext};
use crate::policy::paths::WriteVerdict;

/// Check every path of a write; `Err` carries the refusal or denial the model is told.
pub async fn guard_writes(ctx: &ToolContext, paths: &[PathBuf]) -> Result<(), String> {
    for path in paths {
        match ctx.services.paths.check_write(path) {
            WriteVerdict::Allowed => {}
            WriteVerdict::Refused(message) => return Err(message),
            WriteVerdict::NeedsApproval { key, reason } => {
                let request = ApprovalRequest {
                    command: format!("write {}", path.display()),
                    pattern_key: key.to_string(),
                    reason: reason.to_string(),
                };
                if let ApprovalDecision::Denied(message) = ctx.turn.approve(request).await {
                    return Err(message);
                }
            }
        }
    }
    Ok(())
}
