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
    case Mismatch::kSgsnHeaderTeid: return "sgsn_header_teid";
    case Mismatch::kSgsnUnmatchedResponse: return "sgsn_unmatched_response";
    case Mismatch::kSgsnSequenceNumber: return "sgsn_sequence_number";
    case Mismatch::kSgsnMessageType: return "sgsn_message_type";
    case Mismatch::kSgsnGgsnAddressNotProxy: return "sgsn_ggsn_address_not_proxy";
    case Mismatch::kSgsnControlInvalid: return "sgsn_control_invalid";
    case Mismatch::kSgsnUserPlane: return "sgsn_user_plane";
    case Mismatch::kSgsnUnexpectedCause: return "sgsn_unexpected_cause";
    case Mismatch::kSgsnQos: return "sgsn_qos";
    case Mismatch::kSgsnEndUserAddress: return "sgsn_end_user_address";
    case Mismatch::kSgsnUnexpectedMessage: return "sgsn_unexpected_message";
    case Mismatch::kSgsnUnsafeDestination: return "sgsn_unsafe_destination";
    case Mismatch::kSgsnNetworkRequest: return "sgsn_network_request";
    case Mismatch::kSgsnRequestTeid: return "sgsn_request_teid";
    case Mismatch::kSgsnIeOrder: return "sgsn_ie_order";
    case Mismatch::kGgsnSgsnAddressNotProxy: return "ggsn_sgsn_address_not_proxy";
    case Mismatch::kGgsnControlTeid: return "ggsn_control_teid";
    case Mismatch::kGgsnImsiOutOfRange: return "ggsn_imsi_out_of_range";
    case Mismatch::kGgsnUserPlane: return "ggsn_user_plane";
    case Mismatch::kGgsnUnknownTeid: return "ggsn_unknown_teid";
    case Mismatch::kGgsnContext: return "ggsn_context";
    case Mismatch::kGgsnUnexpectedMessage: return "ggsn_unexpected_message";
    case Mismatch::kGgsnHeaderTeid: return "ggsn_header_teid";
    case Mismatch::kGgsnUnmatchedResponse: return "ggsn_unmatched_response";
    case Mismatch::kGgsnMessageType: return "ggsn_message_type";
    case Mismatch::kGgsnNetworkResponse: return "ggsn_network_response";
    case Mismatch::kGgsnIeOrder: return "ggsn_ie_order";
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

std::string_view txnName(V1Txn t) noexcept {
  switch (t) {
    case V1Txn::kCreatePdp: return "create_pdp";
    case V1Txn::kCreateSecondary: return "create_secondary";
    case V1Txn::kUpdatePdp: return "update_pdp";
    case V1Txn::kDeleteSecondary: return "delete_secondary";
    case V1Txn::kDeletePdp: return "delete_pdp";
    case V1Txn::kCount: break;
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
    case Procedure::kNetworkUpdate: return "network_update";
    case Procedure::kNetworkDelete: return "network_delete";
    case Procedure::kInitiateActivation: return "initiate_activation";
    case Procedure::kPduNotification: return "pdu_notification";
    case Procedure::kCount: break;
  }
  return "unknown";
}

}  // namespace gtpcp::peer
