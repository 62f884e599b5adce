import ChorusCore
import Foundation

/// A change of who belongs to a room, through the room's rules (`RoomBoard`).
public struct MembershipChange: WorkspaceCommand {
    public enum Kind: Sendable {
        /// A manager adds an account, whether or not it is connected (its connections are put in the room).
        case add
        /// A manager invites a connected account: it is a member, and comes in when it joins.
        case invite
        /// The account comes into the room (JOIN) and becomes a member by the room's rules.
        case arrive(firstComer: Bool, voiced: Bool)
        /// The account left (PART), or `actor` made it leave (KICK): the transport has already
        /// shown it leaving; this is what it means for the work it held.
        case leave
        /// `actor` (nil: the room's operator without an account) gives the account a role (MODE ±o, ±v).
        case role(Role, voiced: Bool)
    }

    public let kind: Kind
    public let account: String
    public let room: String
    public let actor: String?

    public static func add(_ account: String, to room: String, by actor: String) -> MembershipChange {
        MembershipChange(kind: .add, account: account, room: room, actor: actor)
    }

    public static func invite(_ account: String, to room: String, by actor: String) -> MembershipChange {
        MembershipChange(kind: .invite, account: account, room: room, actor: actor)
    }

    public static func arrive(_ account: String, in room: String, firstComer: Bool, voiced: Bool = false) -> MembershipChange {
        MembershipChange(kind: .arrive(firstComer: firstComer, voiced: voiced), account: account, room: room, actor: account)
    }

    public static func leave(_ account: String, room: String, by actor: String) -> MembershipChange {
        MembershipChange(kind: .leave, account: account, room: room, actor: actor)
    }

    public static func role(_ role: Role, voiced: Bool, of account: String, in room: String, by actor: String?) -> MembershipChange {
        MembershipChange(kind: .role(role, voiced: voiced), account: account, room: room, actor: actor)
    }

    public func run(on boards: Boards) -> Outcome {
        do {
            switch kind {
            case .add:
                let (membership, event) = try boards.rooms.add(account, to: room, by: actor ?? "")
                return Outcome(events: [event], effects: [.memberAdded(room: membership.room, account: membership.account)])
            case .invite:
                let (membership, event) = try boards.rooms.add(account, to: room, by: actor ?? "")
                return Outcome(events: [event], effects: [.membership(membership)])
            case .arrive(let firstComer, let voiced):
                let membership = try boards.rooms.arrive(account, in: room, firstComer: firstComer, voiced: voiced)
                return Outcome(effects: [.membership(membership)])
            case .leave:
                return Outcome(events: try boards.rooms.leave(account, room: room, by: actor ?? account))
            case .role(let role, let voiced):
                let (membership, event) = try boards.rooms.setRole(account, in: room, to: role, voiced: voiced, by: actor)
                return Outcome(events: event.map { [$0] } ?? [], effects: [.membership(membership)])
            }
        } catch let error as JobError {
            return .refusal(error.description)
        } catch {
            // The store refused the write (a full disk, a lost database): not the room's rules.
            return .refusal("The server could not save that, so nothing changed; try again later (\(error))", code: Outcome.cannotSave)
        }
    }
}
