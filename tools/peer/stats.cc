#include "tools/peer/stats.h"

namespace gtpcp::peer {

std::string_view mismatchName(Mismatch m) noexcept {
  switch (m) {
    case Mismatch::kSgwHeaderTeid: return "sgw_header_teid";
    case Mismatch::kSgwUnmatchedResponse: return "sgw_unmatched_response";
    case Mismatch::kSgwSequenceNumber: return "sgw_sequence_number";
    case Mismatch::kSgwMessageType: return "sgw_message_type";
    case Mismatch::kSgwPgwFteidNotProxy: return "sgw_pgw_fteid_not_proxy";
    case Mismatch::kSgwPgwFteidInvalid: return "sgw_pgw_fteid_invalid";
    case Mismatch::kSgwUserPlaneFteid: return "sgw_user_plane_fteid";
    case Mismatch::kSgwUnexpectedCause: return "sgw_unexpected_cause";
    case Mismatch::kSgwBearerContext: return "sgw_bearer_context";
    case Mismatch::kSgwUnexpectedMessage: return "sgw_unexpected_message";
    case Mismatch::kSgwUnsafeDestination: return "sgw_unsafe_destination";
    case Mismatch::kSgwDeleteBearerRequest: return "sgw_delete_bearer_request";
    case Mismatch::kSgwBearerRequest: return "sgw_bearer_request";
    case Mismatch::kSgwRequestTeid: return "sgw_request_teid";
    case Mismatch::kSgwCommandSequence: return "sgw_command_sequence";
    case Mismatch::kSgwCommandOutcome: return "sgw_command_outcome";
    case Mismatch::kSgwUnknownTeidAnswer: return "sgw_unknown_teid_answer";
    case Mismatch::kPgwSenderFteidNotProxy: return "pgw_sender_fteid_not_proxy";
    case Mismatch::kPgwSenderFteidInvalid: return "pgw_sender_fteid_invalid";
    case Mismatch::kPgwImsiOutOfRange: return "pgw_imsi_out_of_range";
    case Mismatch::kPgwUserPlaneFteid: return "pgw_user_plane_fteid";
    case Mismatch::kPgwUnknownTeid: return "pgw_unknown_teid";
    case Mismatch::kPgwBearerContext: return "pgw_bearer_context";
    case Mismatch::kPgwUnexpectedMessage: return "pgw_unexpected_message";
    case Mismatch::kPgwHeaderTeid: return "pgw_header_teid";
    case Mismatch::kPgwUnmatchedResponse: return "pgw_unmatched_response";
    case Mismatch::kPgwMessageType: return "pgw_message_type";
    case Mismatch::kPgwBearerResponse: return "pgw_bearer_response";
    case Mismatch::kPgwCommand: return "pgw_command";
    case Mismatch::kCount: break;
  }
  return "unknown";
}

std::string_view txnName(Txn t) noexcept {
  switch (t) {
    case Txn::kCreate: return "create_session";
    case Txn::kModify: return "modify_bearer";
    case Txn::kDelete: return "delete_session";
    case Txn::kModifyBearerCommand: return "modify_bearer_command";
    case Txn::kUnknownTeid: return "unknown_teid";
    case Txn::kCount: break;
  }
  return "unknown";
}

std::string_view procedureName(Procedure p) noexcept {
  switch (p) {
    case Procedure::kCreateBearer: return "create_bearer";
    case Procedure::kUpdateBearer: return "update_bearer";
    case Procedure::kDeleteBearer: return "delete_bearer";
    case Procedure::kModifyBearerCommand: return "modify_bearer_command";
    case Procedure::kTriggeredUpdateBearer: return "triggered_update_bearer";
    case Procedure::kFailureIndication: return "failure_indication";
    case Procedure::kUnknownTeid: return "unknown_teid";
    case Procedure::kCount: break;
  }
  return "unknown";
}

}  // namespace gtpcp::peer
