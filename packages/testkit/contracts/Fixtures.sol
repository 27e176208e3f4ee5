// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// A plain ERC-20.
contract Token {
    uint8 public constant decimals = 18;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(uint256 supply) {
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        require(allowance[from][msg.sender] >= value, "allowance");
        allowance[from][msg.sender] -= value;
        move(from, to, value);
        return true;
    }

    function move(address from, address to, uint256 value) internal {
        require(balanceOf[from] >= value, "balance");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}

/// Emits `Transfer` logs as a token would, for any senders: many counterparties in one transaction. It keeps no
/// balances (a log is all a reader of transfers sees) and has no decimals().
contract Spray {
    event Transfer(address indexed from, address indexed to, uint256 value);

    function spray(address[] calldata from, address to, uint256 value) external {
        for (uint256 i = 0; i < from.length; i++) emit Transfer(from[i], to, value);
    }
}

/// Emits, then reverts: its log never stands.
contract Noisy {
    event Noise(uint256 n);

    function noisy(uint256 n) external {
        emit Noise(n);
        revert("noisy");
    }
}

/// Calls the token internally.
contract Router {
    event Routed(address indexed token, address indexed to, uint256 value);

    /// Pulls `value` of the sender's tokens to `to` (an internal transferFrom, whose Transfer is emitted inside).
    function route(Token token, address to, uint256 value) external {
        token.transferFrom(msg.sender, to, value);
        emit Routed(address(token), to, value);
    }

    /// Tries the same; a failing transferFrom reverts inside while the transaction succeeds.
    function tryRoute(Token token, address to, uint256 value) external returns (bool ok) {
        try token.transferFrom(msg.sender, to, value) returns (bool done) {
            ok = done;
        } catch {
            ok = false;
        }
        emit Routed(address(token), to, ok ? value : 0);
    }

    /// Calls a contract that emits and reverts, and carries on.
    function shrug(Noisy noisy) external {
        try noisy.noisy(7) {} catch {}
        emit Routed(address(noisy), msg.sender, 1);
    }
}

/// An EIP-1967 proxy: every call is delegated to the implementation in its slot.
contract Proxy {
    bytes32 private constant IMPLEMENTATION = 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc;

    event Upgraded(address indexed implementation);

    constructor(address implementation) {
        assembly {
            sstore(IMPLEMENTATION, implementation)
        }
        emit Upgraded(implementation);
    }

    fallback() external payable {
        assembly {
            let target := sload(IMPLEMENTATION)
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), target, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 {
                revert(0, returndatasize())
            }
            default {
                return(0, returndatasize())
            }
        }
    }
}

/// Tether's freeze events as USDT states them (the address in the data), for a node standing in for Ethereum.
contract TetherFreezes {
    event AddedBlackList(address _user);
    event RemovedBlackList(address _user);

    function addBlackList(address user) external {
        emit AddedBlackList(user);
    }

    function removeBlackList(address user) external {
        emit RemovedBlackList(user);
    }
}

/// Circle's freeze events as USDC states them (the address indexed).
contract CircleFreezes {
    event Blacklisted(address indexed _account);
    event UnBlacklisted(address indexed _account);

    function blacklist(address account) external {
        emit Blacklisted(account);
    }

    function unBlacklist(address account) external {
        emit UnBlacklisted(account);
    }
}
