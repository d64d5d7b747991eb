//! The `scan` export: documents in, findings out. Needs no `configure`.

use crate::exports::warden::guard::scan::{Document, DocumentKind, ScanFinding, ScanReport};
use crate::warden::guard::types::{PolicyError, Risk};
use alloc::vec::Vec;
use warden_core::model::Risk as CoreRisk;
use warden_core::scan as core;

fn kind(k: DocumentKind) -> core::Kind {
    match k {
        DocumentKind::Skill => core::Kind::Skill,
        DocumentKind::Script => core::Kind::Script,
        DocumentKind::Manifest => core::Kind::Manifest,
        DocumentKind::PackageJson => core::Kind::PackageJson,
        DocumentKind::McpTools => core::Kind::McpTools,
        DocumentKind::Log => core::Kind::Log,
        DocumentKind::Text => core::Kind::Text,
    }
}

fn risk(r: CoreRisk) -> Risk {
    match r {
        CoreRisk::Low => Risk::Low,
        CoreRisk::Medium => Risk::Medium,
        CoreRisk::High => Risk::High,
        CoreRisk::Critical => Risk::Critical,
    }
}

pub fn scan_documents(documents: Vec<Document>) -> Result<ScanReport, PolicyError> {
    let docs: Vec<core::Document<'_>> =
        documents.iter().map(|d| core::Document { name: &d.name, kind: kind(d.kind), text: &d.text }).collect();
    let report = core::scan_documents(&docs).map_err(PolicyError::InvalidInput)?;
    Ok(ScanReport {
        findings: report
            .findings
            .into_iter()
            .map(|f| ScanFinding {
                rule: f.rule.into(),
                document: f.document,
                line: f.line,
                severity: risk(f.severity),
                detail: f.detail,
            })
            .collect(),
        truncated: report.truncated,
    })
}
